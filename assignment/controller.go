package assignment

import (
	"context"
	"log/slog"
	"time"
)

// Store is the controller's view of the replicated state.
type Store interface {
	// View returns the current inputs of Plan.
	View() View
	// Watch returns a channel closed at the next state change.
	Watch() <-chan struct{}
	// Propose applies a decision through Raft.
	Propose(ctx context.Context, d Decision) error
}

// Controller runs Plan whenever the state changes, and every Interval so
// that load changes are seen, and proposes what it decides. It runs on the
// leader alone: leadership starts Run at each term this node leads and ends
// its context with the term (raftnode.Node.RunWhileLeader), so it never
// asks whether it leads.
//
// It settles after each election: for Grace it only places what has no live
// holder (and keeps counts balanced), without load swaps. Loads reach the
// leader from the members' reports, not through Raft, so a new leader's
// picture is partial at first, and swapping on it would move partitions
// only to move them back.
type Controller struct {
	store Store
	log   *slog.Logger
	cfg   ControllerConfig
}

// ControllerConfig tunes a Controller; NewController fills in the defaults.
type ControllerConfig struct {
	// Grace is how long a new leader waits before load swaps.
	Grace time.Duration
	// Interval is how often the leader plans without a state change.
	Interval time.Duration
}

// Defaults of ControllerConfig.
const (
	DefaultGrace    = 5 * time.Second
	DefaultInterval = 2 * time.Second
)

// MinGap is the least time between two decisions a state change prompts.
// Every table's commit changes the replicated state, and a decision reads
// the whole of it (O(tables + partitions)): deciding on each change cost
// 4% of a node's CPU at 100 tables and grows with the square of the
// tables (issue 38). Changes within MinGap of the last decision are
// decided together; a membership change still waits at most this long.
const MinGap = 200 * time.Millisecond

// Option changes a ControllerConfig.
type Option func(*ControllerConfig)

// WithGrace sets the settle period after an election; zero allows load
// swaps at once, a negative value counts as zero.
func WithGrace(d time.Duration) Option {
	return func(c *ControllerConfig) { c.Grace = max(d, 0) }
}

// WithInterval sets how often the leader plans without a state change; a
// value that is not positive keeps the default.
func WithInterval(d time.Duration) Option {
	return func(c *ControllerConfig) {
		if d > 0 {
			c.Interval = d
		}
	}
}

// NewController returns a controller on store.
func NewController(store Store, log *slog.Logger, opts ...Option) *Controller {
	if log == nil {
		log = slog.Default()
	}
	cfg := ControllerConfig{Grace: DefaultGrace, Interval: DefaultInterval}
	for _, o := range opts {
		o(&cfg)
	}
	return &Controller{store: store, log: log.With("component", "assignment"), cfg: cfg}
}

// Run decides for one term this node leads, until ctx ends with it. The
// grace counts from the start of the term.
func (c *Controller) Run(ctx context.Context) {
	tick := time.NewTicker(c.cfg.Interval)
	defer tick.Stop()
	leaderSince := time.Now()
	for {
		changed := c.store.Watch()
		var settled <-chan time.Time // fires when the grace ends, nil otherwise
		wait := c.cfg.Grace - time.Since(leaderSince)
		c.decide(ctx, wait <= 0)
		last := time.Now()
		if wait > 0 {
			settled = time.After(wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
			if !sleepUntil(ctx, last.Add(MinGap)) {
				return
			}
		case <-tick.C:
		case <-settled:
		}
	}
}

// sleepUntil waits until t or ctx's end, whichever is first, and reports
// whether ctx is still live.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// decide plans and proposes a decision that changes something; swaps says
// whether load swaps are allowed yet.
func (c *Controller) decide(ctx context.Context, swaps bool) {
	d := plan(c.store.View(), swaps)
	if d.Empty() {
		return
	}
	if err := c.store.Propose(ctx, d); err != nil {
		c.log.Warn("proposing assignment", "err", err)
		return
	}
	c.log.Info("assigned", "partitions", len(d.Partitions), "committers", len(d.Committers), "load_swaps", swaps)
}
