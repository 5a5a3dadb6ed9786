package node

import (
	"context"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
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
