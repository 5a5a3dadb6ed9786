package raftnode

import (
	"context"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestReadBarrierFencesACutOffNode: a node cut off from the majority (a
// follower, then the leader itself) keeps showing the committer role it
// had, but cannot pass ReadBarrier, so it cannot act on that stale view;
// once reconnected, the barrier passes and its state shows the move.
func TestReadBarrierFencesACutOffNode(t *testing.T) {
	g := newTestGroup(t, []string{"a", "b", "c"}, 3)
	l := g.leader()
	wait.For(t, 10*time.Second, "all registered", func() bool { return len(l.Live()) == 3 })
	f := g.followers(l)[0]
	wait.For(t, 10*time.Second, "follower registered", f.Registered)
	key := ledger.TableKey([]string{"ns", "t"})
	committer := func(n *Node) (a ledger.Assignment) {
		n.FSM().Read(func(s *State) { a = s.Committers[key] })
		return a
	}
	barrier := func(n *Node) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return n.ReadBarrier(ctx)
	}
	mustApply(t, l, Assign{Committers: []CommitterAssignment{{Table: key, Assignment: ledger.Assignment{Node: f.ID(), Epoch: 1}}}})
	if err := barrier(f); err != nil {
		t.Fatalf("barrier on a connected follower: %v", err)
	}
	if a := committer(f); a != (ledger.Assignment{Node: f.ID(), Epoch: 1}) {
		t.Fatalf("after the barrier the follower shows committer %+v", a)
	}

	// The follower is cut off; the majority moves its role away.
	g.partition(f.ID())
	mustApply(t, l, Assign{Committers: []CommitterAssignment{{Table: key, Assignment: ledger.Assignment{Node: l.ID(), Epoch: 2}}}})
	if a := committer(f); a.Node != f.ID() {
		t.Fatalf("the cut-off follower saw the move (%+v): the test proves nothing", a)
	}
	if err := barrier(f); err == nil {
		t.Fatal("a follower cut off from the majority passed the read barrier with a stale state")
	}
	g.heal(f.ID())
	wait.For(t, 10*time.Second, "the healed follower to pass the barrier", func() bool { return barrier(f) == nil })
	if a := committer(f); a != (ledger.Assignment{Node: l.ID(), Epoch: 2}) {
		t.Fatalf("after the barrier the healed follower shows committer %+v", a)
	}

	// The leader is cut off; the others elect one that moves the role.
	g.partition(l.ID())
	nl := g.leader(l.ID())
	mustApply(t, nl, Assign{Committers: []CommitterAssignment{{Table: key, Assignment: ledger.Assignment{Node: nl.ID(), Epoch: 3}}}})
	if a := committer(l); a.Epoch != 2 {
		t.Fatalf("the cut-off leader saw the move (%+v): the test proves nothing", a)
	}
	if err := barrier(l); err == nil {
		t.Fatal("a leader cut off from the majority passed the read barrier with a stale state")
	}
}
