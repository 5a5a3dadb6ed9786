package raftnode

import (
	"context"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestLeftNodeRestartedOnItsDataRejoins: a node that left the group (as a
// drain on SIGTERM does) and is restarted on its old data directory is
// added back, registered and promoted to voter again, instead of waiting
// forever outside the configuration while the group runs one voter short.
func TestLeftNodeRestartedOnItsDataRejoins(t *testing.T) {
	for _, tc := range []struct {
		name   string
		leader bool // the leaving node leads (it hands leadership over first)
	}{
		{name: "follower"},
		{name: "leader", leader: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newTestGroup(t, []string{"a", "b", "c"}, 3)
			l := g.leader()
			wait.For(t, 10*time.Second, "all registered", func() bool {
				var c int
				l.FSM().Read(func(s *State) { c = len(s.Nodes) })
				return c == 3
			})
			leaver := g.followers(l)[0]
			if tc.leader {
				leaver = l
			}
			id := leaver.ID()
			if err := leaver.Leave(context.Background()); err != nil {
				t.Fatalf("leave: %v", err)
			}
			wait.For(t, 20*time.Second, "leaver gone", func() bool {
				nl := g.leader(id)
				return !hasMember(nl, id) && !registered(nl, id)
			})
			if err := leaver.Close(); err != nil {
				t.Fatalf("closing the leaver: %v", err)
			}
			back := g.start(id, 3) // same data directory
			wait.For(t, 30*time.Second, "restarted node back as a registered voter", func() bool {
				nl := g.leader()
				v, _ := voters(nl)
				return v == 3 && back.IsMember() && back.Registered() && registered(nl, id)
			})
		})
	}
}

func hasMember(n *Node, id string) bool {
	for _, m := range n.Members() {
		if m.ID == id {
			return true
		}
	}
	return false
}

func registered(n *Node, id string) bool {
	var ok bool
	n.FSM().Read(func(s *State) { _, ok = s.Nodes[id] })
	return ok
}

// TestDrainOfANodeTheLeaderDoesNotHold: right after a rejoin the leader's
// membership may not hold the node yet (its RegisterNode is not applied,
// or the RemoveNode of its earlier leave is applied last). A drain then
// still marks it draining (it registers as draining), and the node leaves.
func TestDrainOfANodeTheLeaderDoesNotHold(t *testing.T) {
	g := newTestGroup(t, []string{"a", "b", "c"}, 3)
	l := g.leader()
	wait.For(t, 10*time.Second, "all registered", func() bool {
		var c int
		l.FSM().Read(func(s *State) { c = len(s.Nodes) })
		return c == 3
	})
	f := g.followers(l)[0]
	// The membership forgets f; f's own re-registration (each second) has
	// not run yet when the drain starts.
	mustApply(t, f, fsm.RemoveNode{ID: f.ID()})
	if err := f.MarkDraining(context.Background()); err != nil {
		t.Fatalf("draining a node the membership does not hold: %v", err)
	}
	var draining bool
	l.FSM().Read(func(s *State) { m, ok := s.Nodes[f.ID()]; draining = ok && m.Draining })
	if !draining {
		t.Fatal("the drained node is not a draining member at the leader")
	}
	// The record the node keeps current (each second) keeps the mark while
	// it drains: rewriting it without would hand it work again.
	f.ensureRegistered()
	l.FSM().Read(func(s *State) { m, ok := s.Nodes[f.ID()]; draining = ok && m.Draining })
	if !draining {
		t.Fatal("refreshing its membership record cleared the draining mark")
	}
	if err := f.Leave(context.Background()); err != nil {
		t.Fatalf("leave after the drain: %v", err)
	}
	wait.For(t, 20*time.Second, "drained node gone", func() bool {
		return !hasMember(l, f.ID()) && !registered(l, f.ID())
	})
}

// TestSyncWaitsForTheFSM: Sync returns once this node's FSM holds the
// leader's last command, not when Raft's applied index reaches the
// leader's: Raft counts entries as it hands them to the FSM, which applies
// them later (a restarted node catching up lags by whole batches, and read
// metadata files that later commits had deleted). The follower's Info
// answers are made to say Raft is ahead; a command it missed while cut off
// must be in its state when Sync returns.
func TestSyncWaitsForTheFSM(t *testing.T) {
	g := newTestGroup(t, []string{"a", "b", "c"}, 3)
	l := g.leader()
	wait.For(t, 10*time.Second, "all registered", func() bool { return len(l.Live()) == 3 })
	f := g.followers(l)[0]
	wait.For(t, 10*time.Second, "follower registered", f.Registered)
	g.partition(f.ID())
	mustApply(t, l, CreateNamespace{Parts: []string{"while_cut_off"}})
	g.faults[f.ID()].raftAhead.Store(true)
	g.heal(f.ID())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.Sync(ctx); err != nil {
		t.Fatalf("sync: %v", err)
	}
	var ok bool
	f.FSM().Read(func(s *State) { _, ok = s.Namespaces[ledger.TableKey([]string{"while_cut_off"})] })
	if !ok {
		t.Fatal("Sync returned before the FSM applied the leader's last command")
	}
}

// TestOperatorDrainMarkKept: a drain set on a running node (DrainNode,
// applied by the leader) is not undone by the node's own record refresh,
// which runs every autopilot tick. A restarted process, whose first
// registration rewrites the record, keeps an operator's mark (the admin
// API's DrainNode, Operator set) and clears any other left from before (its
// own drain at shutdown, cut short).
func TestOperatorDrainMarkKept(t *testing.T) {
	g := newTestGroup(t, []string{"a", "b", "c"}, 3)
	l := g.leader()
	f := g.followers(l)[0]
	wait.For(t, 10*time.Second, "follower registered by its own process", func() bool {
		return f.Registered() && f.registered.Load()
	})
	draining := func() bool {
		var d bool
		l.FSM().Read(func(s *State) { m, ok := s.Nodes[f.ID()]; d = ok && m.Draining })
		return d
	}
	mustApply(t, l, fsm.DrainNode{ID: f.ID(), Draining: true})
	wait.For(t, 10*time.Second, "the follower applies the drain", func() bool {
		var d bool
		f.FSM().Read(func(s *State) { m, ok := s.Nodes[f.ID()]; d = ok && m.Draining })
		return d
	})
	f.ensureRegistered()
	if !draining() {
		t.Fatal("the node's record refresh cleared the operator's draining mark")
	}
	// As a restarted process: its first registration clears the mark.
	f.registered.Store(false)
	f.ensureRegistered()
	if draining() {
		t.Fatal("a restarted process kept the draining mark of the one before")
	}

	// An operator's mark survives the restart, and the refresh after it.
	mustApply(t, l, fsm.DrainNode{ID: f.ID(), Draining: true, Operator: true})
	wait.For(t, 10*time.Second, "the follower applies the operator's drain", func() bool {
		var d bool
		f.FSM().Read(func(s *State) { m, ok := s.Nodes[f.ID()]; d = ok && m.DrainedByOperator })
		return d
	})
	f.registered.Store(false)
	f.ensureRegistered()
	f.ensureRegistered()
	if !draining() {
		t.Fatal("a restarted process cleared the operator's draining mark")
	}
	// Undrained, the refresh does not set it again.
	mustApply(t, l, fsm.DrainNode{ID: f.ID(), Draining: false})
	wait.For(t, 10*time.Second, "the follower applies the undrain", func() bool {
		var d bool
		f.FSM().Read(func(s *State) { m, ok := s.Nodes[f.ID()]; d = ok && m.Draining })
		return !d
	})
	f.registered.Store(false)
	f.ensureRegistered()
	if draining() {
		t.Fatal("an undrained node drains again after a restart")
	}
}
