package worker

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff is capped exponential backoff with jitter.
type backoff struct {
	min, max time.Duration
	cur      time.Duration
}

func newBackoff() *backoff { return &backoff{min: 200 * time.Millisecond, max: 30 * time.Second} }

// next returns the next wait.
func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur = min(b.cur*2, b.max)
	}
	// Full jitter on the upper half keeps retries of many tables apart.
	return b.cur/2 + rand.N(b.cur/2+1)
}

func (b *backoff) reset() { b.cur = 0 }

// sleep waits d or until ctx ends; it reports whether ctx is still alive.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
