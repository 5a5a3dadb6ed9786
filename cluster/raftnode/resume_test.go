package raftnode

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestHaltedNodeResumes: node c runs a build without PauseTable that
// states level 5. It halts at a pause and cannot resume while the state
// holds a gzip metadata location (level 6), and says so. Once a commit
// points the table at a plain file, c takes the leader's state without a
// restart, ends as its peers, applies what follows, snapshots again (its
// log can be compacted) and takes work again.
func TestHaltedNodeResumes(t *testing.T) {
	g, c, l := olderBuildGroup(t)
	ctx := context.Background()
	wait.For(t, 10*time.Second, "every member registered", func() bool {
		var members int
		l.fsm.Read(func(s *fsm.State) { members = len(s.Nodes) })
		return members == 3
	})
	const gz, plain = "file:///w/db/t/metadata/00000-a.gz.metadata.json", "file:///w/db/t/metadata/00001-b.metadata.json"
	mustApply(t, l, CreateNamespace{Parts: []string{"db"}})
	mustApply(t, l, CreateTable{Ident: []string{"db", "t"}, MetadataLocation: gz})
	key := ledger.TableKey([]string{"db", "t"})
	if _, err := l.Apply(ctx, fsm.PauseTable{Table: key, At: 1}); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "c to halt", func() bool { _, h := c.fsm.Halted(); return h })
	mustApply(t, l, CreateNamespace{Parts: []string{"during"}})
	wait.For(t, 10*time.Second, "c to say why it cannot resume", func() bool {
		return strings.Contains(c.ResumeProblem(), "needs protocol level 6, this node states 5")
	})
	if _, h := c.fsm.Halted(); !h {
		t.Fatal("c resumed from a state that needs a level it does not have")
	}

	mustApply(t, l, CommitTables{Swaps: []TableSwap{{Table: key, Expected: gz, New: plain}}, At: 2})
	wait.For(t, 15*time.Second, "c to resume and reach a's state", func() bool {
		_, h := c.fsm.Halted()
		return !h && bytes.Equal(stateJSON(t, g.nodes["a"]), stateJSON(t, c))
	})
	if p := c.ResumeProblem(); p != "" {
		t.Fatalf("resumed c still shows a problem: %s", p)
	}
	after, err := l.Apply(ctx, CreateNamespace{Parts: []string{"after"}})
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "c to apply what follows", func() bool { return applied(c) >= after })
	c.fsm.Read(func(s *fsm.State) {
		if _, paused := s.Paused[key]; !paused || s.Namespaces["during"] == nil || s.Namespaces["after"] == nil {
			t.Fatalf("resumed c: paused %v, namespaces %v", s.Paused, s.Namespaces)
		}
	})
	if err := c.raft.Snapshot().Error(); err != nil {
		t.Fatalf("a snapshot of resumed c: %v", err)
	}
	wait.For(t, 10*time.Second, "the leader to place work on c again", func() bool { return slices.Contains(l.Live(), "c") })
}
