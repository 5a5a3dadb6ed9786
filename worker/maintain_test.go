package worker

import (
	"testing"
	"time"
)

// TestCommitNotBlockedByOrphanCleanup: orphan cleanup runs off the commit
// loop: while one is running (the fake holds it until released), the loop
// goes on committing appends, and no second cleanup of the table starts;
// its result reaches status when it ends.
func TestCommitNotBlockedByOrphanCleanup(t *testing.T) {
	gate := make(chan struct{})
	h := start(t, "dlq", func(h *harness) {
		h.cfg = func(c *Config) { c.ExpireInterval, c.OrphanInterval = time.Hour, 20*time.Millisecond }
		h.c.orphanGate = gate
		h.k.produce("orders", 1, values(5, nil)...)
	})
	cleanups := func() int {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		return len(h.c.orphanIntents)
	}
	eventually(t, "an orphan cleanup running", func() bool { return cleanups() == 1 })
	eventually(t, "first records committed", func() bool { return committedCount(h, key) == 5 })
	h.k.produce("orders", 1, values(5, nil)...)
	eventually(t, "records produced while the cleanup runs committed", func() bool { return committedCount(h, key) == 10 })
	if n := cleanups(); n != 1 {
		t.Fatalf("%d orphan cleanups started while one was running", n)
	}
	if ts, _ := h.w.Status().Snapshot(); !ts[key].LastOrphanCleanup.IsZero() {
		t.Fatal("the cleanup still running was reported done")
	}
	close(gate)
	eventually(t, "the cleanup reported", func() bool {
		ts, _ := h.w.Status().Snapshot()
		return !ts[key].LastOrphanCleanup.IsZero()
	})
}
