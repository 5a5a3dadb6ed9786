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
	// IsLeader reports whether this node may decide.
	IsLeader() bool
	// Propose applies a decision through Raft.
	Propose(ctx context.Context, d Decision) error
}

// Controller runs Plan on the leader whenever the state changes and proposes
// what it decides. On followers it only waits.
type Controller struct {
	store Store
	log   *slog.Logger
}

// NewController returns a controller on store.
func NewController(store Store, log *slog.Logger) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{store: store, log: log.With("component", "assignment")}
}

// Run decides until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		changed := c.store.Watch()
		if c.store.IsLeader() {
			if d := Plan(c.store.View()); !d.Empty() {
				if err := c.store.Propose(ctx, d); err != nil {
					c.log.Warn("proposing assignment", "err", err)
				} else {
					c.log.Info("assigned", "partitions", len(d.Partitions), "committers", len(d.Committers))
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-tick.C:
		}
	}
}
