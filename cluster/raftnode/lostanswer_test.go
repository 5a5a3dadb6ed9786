package raftnode

import (
	"context"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestLostAnswerOfNonIdempotentCommand: the leader applies a forwarded
// DeleteMapping or CreateNamespace, commands whose repeat
// would be refused, but its answer is lost; the follower resends the same
// proposal and the caller must get success, not "no such mapping" or
// "namespace already exists" for a write that took effect.
func TestLostAnswerOfNonIdempotentCommand(t *testing.T) {
	g := newTestGroup(t, []string{"a", "b", "c"}, 3)
	l := g.leader()
	f := g.followers(l)[0]
	wait.For(t, 10*time.Second, "all registered", func() bool { return f.Registered() && l.Registered() && len(l.Live()) == 3 })
	ctx := context.Background()
	if _, err := f.Apply(ctx, fsm.PutMapping{Mapping: fsm.Mapping{Name: "m"}, Create: true}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []fsm.Command{
		fsm.DeleteMapping{Name: "m"},
		CreateNamespace{Parts: []string{"db"}},
	} {
		t.Run(c.Type().String(), func(t *testing.T) {
			g.faults[l.ID()].dropAnswers.Store(1)
			defer g.faults[l.ID()].dropAnswers.Store(0)
			if _, err := f.Apply(ctx, c); err != nil {
				t.Errorf("with a lost answer: %v", err)
			}
			if left := g.faults[l.ID()].dropAnswers.Load(); left > 0 {
				t.Errorf("the answer was not dropped (%d left): the test proves nothing", left)
			}
		})
	}
	f.FSM().Read(func(s *State) {
		if s.Mappings["m"] != nil || s.Namespaces["db"] == nil {
			t.Fatalf("mapping %v, namespace %v", s.Mappings["m"], s.Namespaces["db"])
		}
	})
	// A second, new proposal is not a resend: it is refused as before.
	if _, err := f.Apply(ctx, fsm.DeleteMapping{Name: "m"}); err == nil {
		t.Fatal("a new delete of a deleted mapping succeeded")
	}
}
