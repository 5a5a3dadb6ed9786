package iceberg

import (
	"context"
	"slices"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/ledger"
)

// newCatalog is the catalog of record on the test's Raft node. Package node
// wires a real node the same way (node.NewCatalog); these tests cannot
// import node, which imports this package.
func newCatalog(rn *raftnode.Node, warehouse string, props iceberg.Properties) *catalog.Catalog {
	return catalog.New(replica{rn}, warehouse, props)
}

// replica is the catalog's view of a Raft node (catalog.Replica).
type replica struct{ n *raftnode.Node }

func (r replica) Read(fn func(*fsm.State)) { r.n.FSM().Read(fn) }

func (r replica) Apply(ctx context.Context, c fsm.Command) (uint64, error) { return r.n.Apply(ctx, c) }

func (r replica) WaitApplied(ctx context.Context, index uint64) error {
	return r.n.FSM().WaitApplied(ctx, index)
}

// testFence is the sink's Fence on the test's Raft node, as cmd/floe/node/replica.go
// wires a real one. onBarrier, when set, runs at the barrier numbered at
// (counted from 1; CleanOrphans' first barrier is the catch-up before it
// lists candidates, its second the fence before it deletes), standing in
// for whatever happens to the state between listing and deleting.
type testFence struct {
	n         *raftnode.Node
	calls     int
	at        int
	onBarrier func() error
}

func (f *testFence) Barrier(ctx context.Context) error {
	f.calls++
	if f.onBarrier != nil && f.calls == f.at {
		if err := f.onBarrier(); err != nil {
			return err
		}
	}
	return f.n.ReadBarrier(ctx)
}

func (f *testFence) Committer(key string) (a ledger.Assignment, ok bool) {
	f.n.FSM().Read(func(s *fsm.State) { a, ok = s.Committers[key] })
	return a, ok
}

func (f *testFence) PendingFiles(key string) (out []string) {
	f.n.FSM().Read(func(s *fsm.State) {
		for _, e := range s.Ledger.Pending[key] {
			for _, d := range append(slices.Clone(e.Files), e.DLQFiles...) {
				out = append(out, d.Path)
			}
		}
	})
	return out
}
