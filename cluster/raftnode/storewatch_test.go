package raftnode

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/testing/wait"
)

// TestWatchedStoreProblem: a failed write is shown until a write succeeds
// and storageProblemFor has passed since the failure, so a full disk
// that lets a small write through between failures does not flicker.
func TestWatchedStoreProblem(t *testing.T) {
	s := &watchedStore{path: "/data/raft/raft.db"}
	now := time.Now()
	if p := s.problem(now); p != "" {
		t.Fatalf("fresh store: %q", p)
	}
	_ = s.note(errors.New("write raft.db: no space left on device"))
	if p := s.problem(time.Now()); !strings.Contains(p, "no space left") || !strings.Contains(p, "/data/raft/raft.db") {
		t.Fatalf("after a failure: %q", p)
	}
	_ = s.note(nil)
	if p := s.problem(time.Now()); p == "" {
		t.Fatal("cleared by one success right after a failure")
	}
	if p := s.problem(time.Now().Add(storageProblemFor)); p != "" {
		t.Fatalf("still shown %s after the failure, a success since: %q", storageProblemFor, p)
	}
	_ = s.note(errors.New("again"))
	if p := s.problem(time.Now().Add(time.Hour)); p == "" {
		t.Fatal("a failure with no success since must stay shown")
	}
}

// TestStorageFailingMemberTakesNoWork: a member whose Raft log store
// fails to write tells the leader in its health answer; the leader shows
// it as storage_failing and leaves it out of the live members (so the
// controller moves its work), and it counts itself out too. Once it writes
// again and the problem's window has passed, it is live again.
func TestStorageFailingMemberTakesNoWork(t *testing.T) {
	g := newTestGroup(t, []string{"a", "b", "c"}, 3)
	c := g.nodes["c"]
	if g.leader() == c {
		if err := c.TransferLeadership(); err != nil {
			t.Fatal(err)
		}
	}
	l := g.leader("c")
	wait.For(t, 10*time.Second, "c live", func() bool { return slices.Contains(l.Live(), "c") })
	_ = c.store.note(errors.New("write raft.db: no space left on device"))
	wait.For(t, 10*time.Second, "the leader to take c out of the live members", func() bool {
		return !slices.Contains(l.Live(), "c") && slices.ContainsFunc(l.Members(), func(m MemberHealth) bool { return m.ID == "c" && m.StorageFailing })
	})
	if slices.Contains(c.Live(), "c") || !strings.Contains(c.StorageProblem(), "no space left") {
		t.Fatalf("c counts itself live (%v) or does not say why (%q)", c.Live(), c.StorageProblem())
	}
	_ = c.store.note(nil)
	c.store.mu.Lock()
	c.store.failedAt = c.store.failedAt.Add(-storageProblemFor) // the window has passed
	c.store.mu.Unlock()
	wait.For(t, 10*time.Second, "c live again", func() bool { return slices.Contains(l.Live(), "c") && c.StorageProblem() == "" })
}

// TestRefusedSnapshotLoggedOnce: Raft's "failed to take snapshot" for a
// halted FSM, which it repeats every snapshot interval, is a warning once
// and debug after; other errors keep their level.
func TestRefusedSnapshotLoggedOnce(t *testing.T) {
	var buf bytes.Buffer
	w := &slogWriter{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	line := `[ERROR] raft: failed to take snapshot: error="failed to start snapshot: snapshot refused: upgrade required: log entry 9 has command type 40"` + "\n"
	for range 3 {
		_, _ = w.Write([]byte(line))
	}
	_, _ = w.Write([]byte(`[ERROR] raft: failed to append to logs: error="no space left on device"` + "\n"))
	got := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{"level=WARN", "level=DEBUG", "level=DEBUG", "level=ERROR"}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i, l := range got {
		if !strings.Contains(l, want[i]) {
			t.Errorf("line %d: %s, want %s", i, l, want[i])
		}
	}
}
