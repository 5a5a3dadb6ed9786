package raftnode

import (
	"context"

	"github.com/apache/iceberg-go"

	floecatalog "github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
)

// The multi-node tests were written in package cluster; these names keep
// them as they were.
type (
	State               = fsm.State
	Command             = fsm.Command
	RegisterNode        = fsm.RegisterNode
	Member              = fsm.Member
	TableSwap           = fsm.TableSwap
	CommitTables        = fsm.CommitTables
	CommitterAssignment = fsm.CommitterAssignment
	RecordFiles         = fsm.RecordFiles
	PartitionAssignment = fsm.PartitionAssignment
	Assign              = fsm.Assign
	CreateTable         = fsm.CreateTable
	CreateNamespace     = fsm.CreateNamespace
)

// NewCatalog is the catalog of record on node n, wired as the cluster
// package wires it.
func NewCatalog(n *Node, warehouse string, props iceberg.Properties) *floecatalog.Catalog {
	return floecatalog.New(testReplica{n}, warehouse, props)
}

type testReplica struct{ n *Node }

func (r testReplica) Read(fn func(*fsm.State)) { r.n.FSM().Read(fn) }

func (r testReplica) Apply(ctx context.Context, c fsm.Command) (uint64, error) {
	return r.n.Apply(ctx, c)
}

func (r testReplica) WaitApplied(ctx context.Context, index uint64) error {
	return r.n.FSM().WaitApplied(ctx, index)
}

var (
	ErrStaleCommitter = fsm.ErrStaleCommitter
)
