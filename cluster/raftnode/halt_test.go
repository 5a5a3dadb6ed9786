package raftnode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/wait"
)

func stateJSON(t *testing.T, n *Node) []byte {
	t.Helper()
	var out []byte
	var err error
	n.fsm.Read(func(s *fsm.State) { out, err = json.Marshal(s) })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// olderBuildGroup starts a, b and c, where c stands in for an older build:
// it lacks PauseTable and states a level below gzip metadata (5). It
// returns the group, c and a leader other than c.
func olderBuildGroup(t *testing.T) (*testGroup, *Node, *Node) {
	t.Helper()
	g := newTestGroupLevels(t, []string{"a", "b", "c"}, 3, map[string][]fsm.Option{"c": {fsm.Without(fsm.CmdPauseTable)}},
		map[string]int{"c": fsm.ProtocolGzipMetadata - 1})
	c := g.nodes["c"]
	if g.leader() == c {
		if err := c.TransferLeadership(); err != nil {
			t.Fatal(err)
		}
	}
	return g, c, g.leader("c")
}

func applied(n *Node) (i uint64) {
	n.fsm.Read(func(s *fsm.State) { i = s.Applied })
	return i
}

// TestMixedBuildsHaltAndCatchUp: in a group where node c runs a build that
// lacks PauseTable (as after a restart on an older binary, which the
// proposer's gate cannot see), c halts at the pause: its state stays as it
// was before the entry while the others go on, it proposes nothing, Raft
// takes no snapshot of it, the leader places no work on it, and elected
// leader it hands leadership over.
// Restarted on the full build, it replays the log and ends as its peers.
func TestMixedBuildsHaltAndCatchUp(t *testing.T) {
	// c states a level below gzip metadata, which the table below uses, so
	// it cannot resume from the leader's state (resume_test.go) and stays
	// halted until the restart.
	g, c, l := olderBuildGroup(t)
	ctx := context.Background()
	wait.For(t, 10*time.Second, "every member registered at this build's level", func() bool {
		var lowest, members int
		l.fsm.Read(func(s *fsm.State) { lowest = s.MinProtocol(); members = len(s.Nodes) })
		return members == 3 && lowest == fsm.ProtocolLevel
	})
	mustApply(t, l, CreateNamespace{Parts: []string{"db"}})
	idx, err := l.Apply(ctx, CreateTable{Ident: []string{"db", "t"}, MetadataLocation: "file:///m0.gz.metadata.json"})
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "c to apply the table", func() bool { return applied(c) >= idx })

	key := ledger.TableKey([]string{"db", "t"})
	pause, err := l.Apply(ctx, fsm.PauseTable{Table: key, At: 1})
	if err != nil {
		t.Fatalf("pausing with a and b at the full build: %v", err)
	}
	wait.For(t, 10*time.Second, "c to halt", func() bool { _, h := c.fsm.Halted(); return h })
	if h, _ := c.fsm.Halted(); h.Index != pause || h.Type != fsm.CmdPauseTable {
		t.Fatalf("halt %+v, want index %d PauseTable", h, pause)
	}
	frozen := stateJSON(t, c)
	after, err := l.Apply(ctx, CreateNamespace{Parts: []string{"after"}})
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "b to apply", func() bool { return applied(g.nodes["b"]) >= after })
	if !bytes.Equal(frozen, stateJSON(t, c)) || applied(c) >= pause {
		t.Fatalf("halted c changed its state (applied %d, pause at %d)", applied(c), pause)
	}
	if _, err := c.Apply(ctx, CreateNamespace{Parts: []string{"from-c"}}); !errors.Is(err, fsm.ErrUpgradeRequired) {
		t.Fatalf("a proposal on halted c: %v", err)
	}
	if err := c.raft.Snapshot().Error(); err == nil {
		t.Fatal("raft took a snapshot of a halted FSM")
	}
	// The leader places no work on it and shows why.
	wait.For(t, 10*time.Second, "the leader to take halted c out of the live members", func() bool {
		return !slices.Contains(l.Live(), "c") && slices.ContainsFunc(l.Members(), func(m MemberHealth) bool { return m.ID == "c" && m.UpgradeRequired })
	})
	if slices.Contains(c.Live(), "c") {
		t.Fatal("halted c counts itself live")
	}
	wait.For(t, 10*time.Second, "c to say why it cannot resume", func() bool {
		return strings.Contains(c.ResumeProblem(), "needs protocol level 6")
	})

	// Elected, c hands leadership over; the group keeps a working leader.
	if err := l.raft.LeadershipTransferToServer(raft.ServerID("c"), g.trans["c"].LocalAddr()).Error(); err != nil {
		t.Fatalf("transferring leadership to c: %v", err)
	}
	wait.For(t, 15*time.Second, "c to hand leadership over", func() bool {
		_, id := g.nodes["a"].Leader()
		return id != "" && id != "c" && !c.IsLeader()
	})
	mustApply(t, g.leader("c"), CreateNamespace{Parts: []string{"after-transfer"}})

	// The operator restarts c on the full build: it replays the log.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	delete(g.fsm, "c")
	delete(g.protocol, "c")
	c = g.start("c", 3)
	wait.For(t, 15*time.Second, "restarted c to reach a's state", func() bool {
		return bytes.Equal(stateJSON(t, g.nodes["a"]), stateJSON(t, c))
	})
	if _, halted := c.fsm.Halted(); halted {
		t.Fatal("c still halted on the full build")
	}
	wait.For(t, 10*time.Second, "upgraded c to be live again", func() bool { return slices.Contains(g.leader().Live(), "c") })
	c.fsm.Read(func(s *fsm.State) {
		if _, paused := s.Paused[key]; !paused || s.Namespaces["after-transfer"] == nil {
			t.Fatalf("restarted c: paused %v, namespaces %v", s.Paused, s.Namespaces)
		}
	})
}
