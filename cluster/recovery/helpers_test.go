package recovery

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/internal/clustertest"
	"github.com/floe-io/floe/cluster/raftnode"
)

// The recovery tests were written in package cluster; these names keep
// them as they were.

type (
	Node    = raftnode.Node
	Catalog = catalog.Catalog

	Assign              = fsm.Assign
	Command             = fsm.Command
	CommitterAssignment = fsm.CommitterAssignment
	FSM                 = fsm.FSM
	RestoreState        = fsm.RestoreState
	Member              = fsm.Member
	PartitionAssignment = fsm.PartitionAssignment
	RecordFiles         = fsm.RecordFiles
	RegisterNode        = fsm.RegisterNode
	RegisterSources     = fsm.RegisterSources
	State               = fsm.State
	Table               = fsm.Table
	TopicSource         = fsm.TopicSource
)

var (
	apply         = clustertest.Apply
	seeded        = clustertest.Seeded
	snapshotBytes = clustertest.SnapshotBytes

	DLQKey             = fsm.DLQKey
	DecodeSnapshot     = fsm.DecodeSnapshot
	ErrStaleCommitter  = fsm.ErrStaleCommitter
	ErrSnapshotVersion = fsm.ErrSnapshotVersion
	MetadataVersion    = catalog.MetadataVersion
)

func openNode(t *testing.T, dir string) *raftnode.Node { return clustertest.OpenNode(t, dir) }

// NewCatalog is the catalog of record on n, wired as package node wires it.
func NewCatalog(n *raftnode.Node, warehouse string, props iceberg.Properties) *catalog.Catalog {
	return catalog.New(clustertest.Replica(n), warehouse, props)
}

func NewFSM(any) *fsm.FSM { return fsm.New() }

// metadataAt reads and parses the metadata file at loc (the catalog's own
// reader is unexported).
func metadataAt(ctx context.Context, loc string) (table.Metadata, error) {
	fsys, err := icebergio.LoadFS(ctx, iceberg.Properties{}, loc)
	if err != nil {
		return nil, err
	}
	data, err := fsys.(icebergio.ReadFileIO).ReadFile(loc)
	if err != nil {
		return nil, err
	}
	return table.ParseMetadataBytes(data)
}
