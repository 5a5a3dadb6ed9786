package node

import (
	"context"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/delta"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
	"github.com/floe-io/floe/worker"
)

// NewCatalog returns the catalog of record on a Raft node: it reads the
// node's FSM and proposes its commits through the node.
func NewCatalog(rn *raftnode.Node, warehouse string, props iceberg.Properties) *catalog.Catalog {
	return catalog.New(replica{rn}, warehouse, props)
}

// replica is the catalog's view of a Raft node (catalog.Replica): the shim
// lives here, where the two are wired, so neither imports the other.
type replica struct{ n *raftnode.Node }

var _ catalog.Replica = replica{}

func (r replica) Read(fn func(*fsm.State)) { r.n.FSM().Read(fn) }

func (r replica) Apply(ctx context.Context, c fsm.Command) (uint64, error) { return r.n.Apply(ctx, c) }

func (r replica) WaitApplied(ctx context.Context, index uint64) error {
	return r.n.FSM().WaitApplied(ctx, index)
}

// NewFence returns the Iceberg sink's fence on a Raft node
// (icebergsink.Fence): its barrier is the node's ReadBarrier, and it reads
// roles and pending entries from the node's state.
func NewFence(rn *raftnode.Node) icebergsink.Fence { return fence{rn} }

// fence is the sink's view of a Raft node before it deletes table files.
type fence struct{ n *raftnode.Node }

func (f fence) Barrier(ctx context.Context) error { return f.n.ReadBarrier(ctx) }

func (f fence) Committer(key string) (a ledger.Assignment, ok bool) {
	f.n.FSM().Read(func(s *fsm.State) { a, ok = s.Committers[key] })
	return a, ok
}

func (f fence) PendingFiles(key string) (out []string) {
	f.n.FSM().Read(func(s *fsm.State) {
		for _, e := range s.Ledger.Pending[key] {
			for _, d := range e.Files {
				out = append(out, d.Path)
			}
			for _, d := range e.DLQFiles {
				out = append(out, d.Path)
			}
		}
	})
	return out
}

// deltaTables is the sink's view of which tables write a Delta log (the
// worker's routes: their mappings' formats) and what the replicated state
// last recorded of each.
type deltaTables struct {
	w *worker.Worker
	n *raftnode.Node
}

func (d deltaTables) WritesDelta(key string) bool { return d.w.WritesDelta(key) }

func (d deltaTables) DeltaSettings(key string) delta.Settings {
	s := d.w.DeltaSettings(key)
	return delta.Settings{CheckpointInterval: int64(s.CheckpointInterval), LogRetention: s.LogRetention.D()}
}

func (d deltaTables) DeltaRecorded(key string) (c ledger.DeltaCommit, ok bool) {
	d.n.FSM().Read(func(s *fsm.State) {
		if t := s.Tables[key]; t != nil && t.Delta != nil {
			c, ok = *t.Delta, true
		}
	})
	return c, ok
}
