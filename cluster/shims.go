package cluster

import (
	"context"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
)

// replica is the catalog's view of a Raft node (catalog.Replica): the shim
// lives here, where the two are wired, so neither imports the other.
type replica struct{ n *raftnode.Node }

func (r replica) Read(fn func(*fsm.State)) { r.n.FSM().Read(fn) }

func (r replica) Apply(ctx context.Context, c fsm.Command) (uint64, error) { return r.n.Apply(ctx, c) }

func (r replica) WaitApplied(ctx context.Context, index uint64) error {
	return r.n.FSM().WaitApplied(ctx, index)
}
