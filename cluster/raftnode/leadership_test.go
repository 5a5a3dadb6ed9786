package raftnode

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/testing/wait"
)

// termLog records, per node, whether its leader task is running and how
// many terms it ran.
type termLog struct {
	mu      sync.Mutex
	running map[string]bool
	started map[string]int
}

func (l *termLog) task(id string) func(context.Context) {
	return func(ctx context.Context) {
		l.mu.Lock()
		l.running[id] = true
		l.started[id]++
		l.mu.Unlock()
		<-ctx.Done()
		l.mu.Lock()
		l.running[id] = false
		l.mu.Unlock()
	}
}

func (l *termLog) state(id string) (running bool, started int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running[id], l.started[id]
}

// TestRunWhileLeader: the leader-only task runs on the leader alone; when
// leadership moves, the old leader's task ends and the new leader's
// starts; when the caller's context ends, the task ends and RunWhileLeader
// returns.
func TestRunWhileLeader(t *testing.T) {
	g := newTestGroup(t, []string{"a", "b", "c"}, 3)
	old := g.leader()
	log := &termLog{running: map[string]bool{}, started: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for id, n := range g.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); n.RunWhileLeader(ctx, log.task(id)) }()
	}
	wait.For(t, 15*time.Second, "the leader's task to run", func() bool {
		running, _ := log.state(old.ID())
		return running
	})
	for id := range g.nodes {
		if running, started := log.state(id); id != old.ID() && (running || started > 0) {
			t.Fatalf("follower %s ran the leader task (running %v, %d terms)", id, running, started)
		}
	}
	if err := old.TransferLeadership(); err != nil {
		t.Fatal(err)
	}
	next := g.leader(old.ID())
	wait.For(t, 15*time.Second, "the task to move with leadership", func() bool {
		oldRunning, _ := log.state(old.ID())
		newRunning, _ := log.state(next.ID())
		return !oldRunning && newRunning
	})
	if _, started := log.state(old.ID()); started != 1 {
		t.Errorf("the old leader started its task %d times, want 1", started)
	}
	cancel()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunWhileLeader did not return after its context ended")
	}
	if running, _ := log.state(next.ID()); running {
		t.Error("the leader's task still runs after the context ended")
	}
}
