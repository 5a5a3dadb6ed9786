package status

import (
	"sync"
	"time"
)

// HistorySize is how many samples History keeps per table: an hour at
// HistoryInterval. It bounds the history's memory to about 16 bytes times
// HistorySize per table (about 2 KiB; 1 MiB for 500 tables).
const HistorySize = 120

// HistoryInterval is how often a node samples its tables' freshness.
const HistoryInterval = 30 * time.Second

// Sample is one table's freshness at one time.
type Sample struct {
	At           time.Time
	FreshnessSec float64
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

// Record adds one sample per table named in fresh (display name to
// freshness in seconds) and forgets the tables fresh does not name, so a
// dropped table's samples do not stay.
func (h *History) Record(at time.Time, fresh map[string]float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for name := range h.tables {
		if _, ok := fresh[name]; !ok {
			delete(h.tables, name)
		}
	}
	for name, sec := range fresh {
		r := h.tables[name]
		if r == nil {
			r = &ring{}
			h.tables[name] = r
		}
		r.buf[r.next] = Sample{At: at, FreshnessSec: sec}
		r.next = (r.next + 1) % HistorySize
		r.full = r.full || r.next == 0
	}
}

// Freshness returns a table's samples, oldest first (nil when it has none).
func (h *History) Freshness(table string) []Sample {
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
