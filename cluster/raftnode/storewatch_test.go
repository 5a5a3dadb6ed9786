package raftnode

import (
	"errors"
	"strings"
	"testing"
	"time"
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
