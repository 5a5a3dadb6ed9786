package assignment

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/wait"
)

// fakeStore applies proposals at once and records when they came.
type fakeStore struct {
	mu        sync.Mutex
	view      View
	watch     chan struct{}
	proposals []proposal
	views     int // View calls: one per decision
}

type proposal struct {
	at time.Time
	d  Decision
}

func newFakeStore(v View) *fakeStore {
	if v.Committers == nil {
		v.Committers = map[string]ledger.Assignment{}
	}
	return &fakeStore{view: v, watch: make(chan struct{})}
}

func (s *fakeStore) View() View {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.views++
	v := s.view
	v.Current, v.Committers = maps.Clone(v.Current), maps.Clone(v.Committers)
	return v
}

func (s *fakeStore) Watch() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watch
}

func (s *fakeStore) Propose(_ context.Context, d Decision) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.view.Current = Apply(s.view.Current, d)
	maps.Copy(s.view.Committers, d.Committers)
	s.proposals = append(s.proposals, proposal{at: time.Now(), d: d})
	s.changedLocked()
	return nil
}

func (s *fakeStore) changedLocked() {
	close(s.watch)
	s.watch = make(chan struct{})
}

// update changes the store under its lock and signals the change.
func (s *fakeStore) update(f func(s *fakeStore)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
	s.changedLocked()
}

func (s *fakeStore) snapshot() []proposal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]proposal(nil), s.proposals...)
}

// patience bounds every wait on the controller: generous, since the CPUs
// are shared.
const patience = 10 * time.Second

// run starts c and returns a function that stops it and waits for Run to
// return, so goleak sees no goroutine left.
func run(c *Controller) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	return func() { cancel(); <-done }
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestControllerDecidesAtOnce: a term's controller places what has no
// holder at its start, without waiting for a change or a tick.
func TestControllerDecidesAtOnce(t *testing.T) {
	s := newFakeStore(View{Nodes: []string{"a"}, Partitions: tps(3), Tables: []string{"x"}})
	stop := run(NewController(s, quiet(), WithInterval(time.Hour)))
	defer stop()
	wait.For(t, patience, "the leader's placement", func() bool { return len(s.snapshot()) == 1 })
	if d := s.snapshot()[0].d; len(d.Partitions) != 3 || len(d.Committers) != 1 {
		t.Fatalf("decision %+v", d)
	}
}

// A new leader places at once what has no holder, but swaps for load only
// after its grace; after losing and regaining leadership it settles again.
func TestControllerSettlesBeforeSwaps(t *testing.T) {
	const grace = 150 * time.Millisecond
	v := hotView()
	v.Tables = []string{"x"} // no committer yet: placed immediately
	s := newFakeStore(v)
	start := time.Now()
	stop := run(NewController(s, quiet(), WithGrace(grace), WithInterval(5*time.Millisecond)))
	defer func() { stop() }() // the second term's, below

	wait.For(t, patience, "two proposals", func() bool { return len(s.snapshot()) >= 2 })
	p := s.snapshot()
	if len(p[0].d.Partitions) != 0 || len(p[0].d.Committers) != 1 {
		t.Fatalf("first decision %+v, want the committer only", p[0].d)
	}
	if len(p[1].d.Partitions) != 2 || p[1].at.Sub(start) < grace {
		t.Fatalf("swap %+v after %v, want one swap after the %v grace", p[1].d, p[1].at.Sub(start), grace)
	}

	// The term ends (leadership ends Run), and a new one begins with c now
	// hot: the new term settles again before it swaps.
	stop()
	s.update(func(s *fakeStore) {
		for i, tp := range s.view.Partitions {
			s.view.Load[tp] = 100 * kib
			if i >= 4 { // both on c
				s.view.Load[tp] = 800 * kib
			}
		}
	})
	again := time.Now()
	stop = run(NewController(s, quiet(), WithGrace(grace), WithInterval(5*time.Millisecond)))
	wait.For(t, patience, "the next swap", func() bool { return len(s.snapshot()) >= 3 })
	if q := s.snapshot()[2]; q.at.Sub(again) < grace {
		t.Fatalf("swapped %v after the new term, before the %v grace", q.at.Sub(again), grace)
	}
}

func TestControllerOptions(t *testing.T) {
	c := NewController(nil, nil)
	if c.cfg != (ControllerConfig{Grace: DefaultGrace, Interval: DefaultInterval}) {
		t.Fatalf("defaults %+v", c.cfg)
	}
	c = NewController(nil, nil, WithGrace(-time.Second), WithInterval(0))
	if c.cfg != (ControllerConfig{Grace: 0, Interval: DefaultInterval}) {
		t.Fatalf("clamped %+v", c.cfg)
	}
}

// TestControllerCoalescesChanges: every commit changes the replicated
// state, and a decision reads all of it. A storm of changes (one per
// millisecond for a second, as a thousand committing tables would make)
// gets at most one decision per MinGap, not one per change; and the
// controller still reacts to them.
func TestControllerCoalescesChanges(t *testing.T) {
	s := newFakeStore(View{Nodes: []string{"a"}, Partitions: tps(3), Tables: []string{"x"}})
	stop := run(NewController(s, quiet())) // the default 2 s interval: no tick in the storm
	defer stop()
	wait.For(t, patience, "the first placement", func() bool { return len(s.snapshot()) == 1 })
	s.mu.Lock()
	before := s.views
	s.mu.Unlock()
	const storm = time.Second
	start := time.Now()
	changes := 0
	for time.Since(start) < storm {
		s.update(func(*fakeStore) {})
		changes++
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	s.mu.Lock()
	decisions := s.views - before
	s.mu.Unlock()
	// One decision per MinGap of the storm, one for its start, one at a
	// gap's edge, one tick should the machine stall: slower machines only
	// decide less.
	most := min(int(elapsed/MinGap)+3, changes/10)
	if decisions > most || decisions < 2 {
		t.Fatalf("%d decisions for %d changes in %s, want 2..%d", decisions, changes, elapsed.Round(time.Millisecond), most)
	}
}
