package worker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/status"
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

// TestFencedOrphanCleanup: a cleanup the sink refused because the role
// moved (ledger.ErrStaleCommitter: it deleted nothing) is not a problem of
// this node; any other failure, the fence's barrier included, is shown.
func TestFencedOrphanCleanup(t *testing.T) {
	h := start(t, "dlq", func(h *harness) {
		h.cfg = func(c *Config) { c.ExpireInterval, c.OrphanInterval = time.Hour, 20*time.Millisecond }
		h.c.orphanErr = errFakeFenced
		h.k.produce("orders", 1, values(5, nil)...)
	})
	cleanups := func() int {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		return len(h.c.orphanIntents)
	}
	eventually(t, "committed", func() bool { return committedCount(h, key) == 5 })
	seen := cleanups()
	eventually(t, "two more cleanups ended", func() bool { return cleanups() >= seen+2 })
	if ts, _ := h.w.Status().Snapshot(); ts[key].State == status.StateDegraded || !ts[key].LastOrphanCleanup.IsZero() {
		t.Fatalf("a cleanup refused as stale shown as a failure or as done: %+v", ts[key])
	}
	h.c.mu.Lock()
	h.c.orphanErr = errors.New("read barrier failed (test)")
	h.c.mu.Unlock()
	eventually(t, "the failure shown", func() bool {
		ts, _ := h.w.Status().Snapshot()
		return ts[key].State == status.StateDegraded && strings.Contains(ts[key].Reason, "read barrier failed")
	})
}
