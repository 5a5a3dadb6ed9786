package worker

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/membudget"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/worker/ingest"
	"github.com/floe-io/floe/worker/source"
)

const eventsKey = "db\x1fevents"

// decodedValues is values(n, nil) with the key written with an escape, so
// that each record is decoded on its way in, never kept as fetched
// (worker/ingest jsoncheck.go): its charge is then the same whenever the
// columns reach the fetchers, and the budget tests can count in it.
func decodedValues(n int) []string {
	out := values(n, nil)
	for i, v := range out {
		out[i] = strings.Replace(v, `"i"`, `"\u0069"`, 1)
	}
	return out
}

// costOf is what the budget charges for the records decodedValues makes.
func costOf(vals []string) int64 {
	var n int64
	for _, v := range vals {
		n += ingest.RecordCost("json", source.Message{Value: []byte(v)})
	}
	return n
}

// budgetFor is a memory_budget's split whose record share exceeds share.
func budgetFor(share int64) membudget.Split { return membudget.Of(membudget.ForRecords(share)) }

func tableStatus(h *harness, key string) status.TableStatus {
	ts, _ := h.w.Status().Snapshot()
	return ts[key]
}

// TestBudgetFlushesLargestFirst: an idle table holds most of the budget
// when another table receives records. The idle table's buffer is the
// one flushed (once); the busy table's records are not cut into a file
// each (the reviewer saw 200 records become 23 files).
func TestBudgetFlushesLargestFirst(t *testing.T) {
	big, small := decodedValues(400), decodedValues(200)
	share := costOf(big) + costOf(small[:20])
	h := start(t, "log", func(h *harness) {
		h.cfg = func(c *Config) {
			c.CommitInterval = time.Hour // no flush but the budget's
			c.TargetFileSize = 1 << 30
			c.Memory = budgetFor(share)
			c.Tables = append(c.Tables, config.Table{Topic: "events", Namespace: "db", Name: "events", Format: "json", ErrorMode: "log", StartOffset: "earliest"})
		}
	})
	h.k.produce("orders", 1, big...)
	eventually(t, "the idle table buffers its records", consumed(h, int64(len(big))))
	if held, _ := h.w.MemoryHeld(); held != costOf(big) {
		t.Fatalf("held %d bytes, want the idle table's %d", held, costOf(big))
	}
	h.k.produce("events", 1, small...)
	eventually(t, "the busy table consumes every record", func() bool {
		return tableStatus(h, eventsKey).Consumed == int64(len(small))
	})
	eventually(t, "the idle table's flush is recorded", func() bool { return tableStatus(h, key).FilesWritten == 1 })
	if f := tableStatus(h, eventsKey).FilesWritten; f != 0 {
		t.Fatalf("the busy table wrote %d files under pressure, want 0 (its buffer is the smaller one)", f)
	}
	if held, _ := h.w.MemoryHeld(); held != costOf(small) {
		t.Fatalf("held %d bytes after the flush, want the busy table's %d", held, costOf(small))
	}
}

// TestBudgetBlocksReaders: while nothing can be flushed (storage hangs),
// the readers stop at the budget (at most one record each past it, read
// and waiting to be charged); once storage answers they resume and every
// offset is committed exactly once.
func TestBudgetBlocksReaders(t *testing.T) {
	const n, parts = 2000, 4
	vals := decodedValues(n)
	one := costOf(vals[n-1:])
	share := 50 * one
	gate := make(chan struct{})
	var closeGate sync.Once
	h := start(t, "log", func(h *harness) {
		h.c.writeGate = gate
		h.cfg = func(c *Config) { c.Memory = budgetFor(share) }
	})
	t.Cleanup(func() { closeGate.Do(func() { close(gate) }) })
	h.k.produce("orders", parts, vals...)
	_, limit := h.w.MemoryHeld()
	eventually(t, "the budget fills", func() bool {
		held, _ := h.w.MemoryHeld()
		return held > limit-one
	})
	eventually(t, "every reader waits", func() bool {
		_, reads := h.k.counts()
		// Each reader's Read returned a record it now waits to charge, or
		// blocks in a Read that will return one: records read are those
		// held, one per reader in acquire, one per reader in Read.
		return reads >= int(limit/one)
	})
	held, _ := h.w.MemoryHeld()
	if held > limit+one {
		t.Fatalf("held %d bytes, limit %d plus one record %d", held, limit, one)
	}
	if c := tableStatus(h, key).Consumed; c >= n {
		t.Fatalf("consumed all %d records while nothing could be flushed: readers were not held back", c)
	}
	if _, reads := h.k.counts(); reads > int(limit/one)+2*parts+1 {
		t.Fatalf("%d reads with room for %d records: readers did not stop at the budget", reads, limit/one)
	}
	closeGate.Do(func() { close(gate) })
	eventually(t, "every record committed", func() bool { return committedCount(h, key) == n })
	exactlyOnce(t, h, n, parts, key)
	eventually(t, "the budget empties", func() bool { held, _ := h.w.MemoryHeld(); return held == 0 })
}

// TestPendingCapHoldsFlushes: while the committer cannot commit, a table's
// flushes stop at MaxPending recorded entries, showing why; once commits
// land the held flush records and nothing is lost.
func TestPendingCapHoldsFlushes(t *testing.T) {
	const maxPending = 2
	h := start(t, "log", func(h *harness) {
		h.c.failCommit = true
		h.cfg = func(c *Config) { c.MaxPending = maxPending }
	})
	n := 0
	for batch := range maxPending + 1 {
		vals := make([]string, 10)
		for i := range vals {
			vals[i] = fmt.Sprintf(`{"i":%d}`, n)
			n++
		}
		h.k.produce("orders", 1, vals...)
		if batch < maxPending {
			eventually(t, fmt.Sprintf("entry %d recorded", batch+1), func() bool { return len(h.c.Pending(key)) == batch+1 })
		}
	}
	eventually(t, "the flush past the cap waits, showing why", func() bool {
		st := tableStatus(h, key)
		return st.Consumed == int64(n) && st.State == status.StateDegraded && strings.Contains(st.Reason, "(cap 2)")
	})
	if p := len(h.c.Pending(key)); p != maxPending {
		t.Fatalf("%d pending entries, want the cap %d", p, maxPending)
	}
	// The waiting flush has written nothing yet: files written long before
	// they are recorded would look like orphans.
	h.c.mu.Lock()
	written := len(h.c.files)
	h.c.mu.Unlock()
	if written != maxPending {
		t.Fatalf("%d files written while the third flush waits, want %d", written, maxPending)
	}
	h.c.mu.Lock()
	h.c.failCommit = false
	h.c.mu.Unlock()
	eventually(t, "every record committed", func() bool { return committedCount(h, key) == n })
	exactlyOnce(t, h, n, 1, key)
	eventually(t, "the table runs again", func() bool { return tableStatus(h, key).State == status.StateRunning })
}
