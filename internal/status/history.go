package status

import (
	"sync"
	"time"
)

// HistorySize is how many samples History keeps per table: an hour at
// HistoryInterval. It bounds the history's memory to about 40 bytes times
// HistorySize per table (about 5 KiB; 2.4 MiB for 500 tables).
const HistorySize = 120

// HistoryInterval is how often a node samples its tables.
const HistoryInterval = 30 * time.Second

// Sample is one table at one time: its freshness, its committed rows (the
// console's throughput is their rate) and its lag in records as the
// sampling node sees it (-1 when unknown).
type Sample struct {
	At           time.Time
	FreshnessSec float64
	Rows         int64
	Lag          int64
}

// History keeps the newest HistorySize freshness samples of each table, in
// memory only (the console's charts; a restarted node starts empty). Safe
// for concurrent use.
type History struct {
	mu     sync.Mutex
	tables map[string]*ring
}

// ring is a fixed-size circular buffer of samples, oldest at next once
// full.
type ring struct {
	buf  [HistorySize]Sample
	next int
	full bool
}

// NewHistory returns an empty history.
func NewHistory() *History { return &History{tables: map[string]*ring{}} }

// Record adds one sample per table named in samples (by display name; At
// is set to at) and forgets the tables it does not name, so a dropped
// table's samples do not stay.
func (h *History) Record(at time.Time, samples map[string]Sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for name := range h.tables {
		if _, ok := samples[name]; !ok {
			delete(h.tables, name)
		}
	}
	for name, smp := range samples {
		r := h.tables[name]
		if r == nil {
			r = &ring{}
			h.tables[name] = r
		}
		smp.At = at
		r.buf[r.next] = smp
		r.next = (r.next + 1) % HistorySize
		r.full = r.full || r.next == 0
	}
}

// Samples returns a table's samples, oldest first (nil when it has none).
func (h *History) Samples(table string) []Sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.tables[table]
	if r == nil {
		return nil
	}
	if !r.full {
		return append([]Sample(nil), r.buf[:r.next]...)
	}
	out := make([]Sample, 0, HistorySize)
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}
