package ingest

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/floe-io/floe/internal/ledger"
)

// rateHalfLife is how fast a partition's measured throughput forgets the
// past: long enough that a burst does not make the leader move partitions
// back and forth, short enough that a lasting change shows within minutes.
const rateHalfLife = 30 * time.Second

// rates measures the bytes per second fetched per partition as an
// exponentially weighted moving average. The fetch path only adds to an
// atomic counter; the average is folded in when someone reads it, so the
// per-message cost stays one atomic add.
type rates struct {
	halfLife time.Duration
	now      func() time.Time

	mu     sync.Mutex
	meters map[ledger.TopicPartition]*meter
}

// meter is one partition's measurement. It outlives the partition's
// fetcher so that a partition that comes back (a refused flush restarts
// every fetcher) keeps its history instead of starting again at zero.
type meter struct {
	pending atomic.Int64 // bytes fetched since the last fold

	// Guarded by rates.mu.
	active int // running fetchers of the partition on this node
	rate   float64
	last   time.Time
}

func newRates(halfLife time.Duration, now func() time.Time) *rates {
	return &rates{halfLife: halfLife, now: now, meters: map[ledger.TopicPartition]*meter{}}
}

// add counts bytes fetched; safe from any goroutine, no lock.
func (m *meter) add(n int64) { m.pending.Add(n) }

// acquire returns the meter of a partition whose fetcher starts.
func (r *rates) acquire(tp ledger.TopicPartition) *meter {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	m, ok := r.meters[tp]
	if !ok {
		m = &meter{last: now}
		r.meters[tp] = m
	} else {
		r.fold(m, now) // the idle gap decays what it measured before
	}
	m.active++
	return m
}

// release marks a partition's fetcher stopped: it no longer counts as
// fetched by this node.
func (r *rates) release(m *meter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m.active--
}

// fold averages the bytes counted since the last fold into the rate, as if
// they had arrived evenly over the elapsed time. The weight depends on the
// elapsed time, so irregular reads give the same average as a fixed tick.
func (r *rates) fold(m *meter, now time.Time) {
	dt := now.Sub(m.last).Seconds()
	if dt <= 0 {
		return // keep counting; the clock has not moved
	}
	inst := float64(m.pending.Swap(0)) / dt
	alpha := 1 - math.Exp(-dt*math.Ln2/r.halfLife.Seconds())
	m.rate += alpha * (inst - m.rate)
	m.last = now
}

// snapshot returns the current rate of every partition being fetched.
func (r *rates) snapshot() map[ledger.TopicPartition]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	out := map[ledger.TopicPartition]float64{}
	for tp, m := range r.meters {
		if m.active <= 0 {
			continue
		}
		r.fold(m, now)
		out[tp] = m.rate
	}
	return out
}
