package fsm_test

import (
	"log/slog"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/internal/clustertest"
	"github.com/floe-io/floe/cluster/raftnode"
)

// The command tests are an external package: they apply entries through
// the Raft adapter, as a node does, so that refusals carry the iceberg-go
// sentinels and classify (IsRetryable) exactly as callers see them. These
// names keep the tests as they were written in package cluster.

type ApplyResult = raftnode.ApplyResult

var (
	IsRetryable        = raftnode.IsRetryable
	applyCatalogSynced = fsm.ApplyCatalogSynced
)

func NewFSM(*slog.Logger) *fsm.FSM { return fsm.New() }

// The FSM helpers are shared with the recovery tests.
var (
	apply         = clustertest.Apply
	seeded        = clustertest.Seeded
	snapshotBytes = clustertest.SnapshotBytes
)
