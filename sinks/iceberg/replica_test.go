package iceberg

import (
	"context"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
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
