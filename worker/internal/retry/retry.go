package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is capped exponential backoff with jitter.
type Backoff struct {
	min, max time.Duration
	cur      time.Duration
}

// New returns a backoff from 200ms to 30s.
func New() *Backoff { return &Backoff{min: 200 * time.Millisecond, max: 30 * time.Second} }

// Next returns the next wait.
func (b *Backoff) Next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur = min(b.cur*2, b.max)
	}
	// Full jitter on the upper half keeps retries of many tables apart.
	return b.cur/2 + rand.N(b.cur/2+1)
}

// Reset starts the next run of failures at the shortest wait.
func (b *Backoff) Reset() { b.cur = 0 }

// Sleep waits d or until ctx ends; it reports whether ctx is still alive.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
