package worker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestMaintainCompactionDisabled: maintenance on demand of a table whose
// mapping sets compaction.enabled: false is refused, names the setting and
// --force, and runs nothing; with force it compacts.
func TestMaintainCompactionDisabled(t *testing.T) {
	off := false
	h := start(t, "dlq", func(h *harness) {
		h.cfg = func(c *Config) {
			c.Tables[0].Compaction.Enabled = &off
			c.Tables[0].Compaction.MaxBytesPerHour = 1 << 40
		}
		h.c.rewrite = fakeRewrite{}
		h.k.produce("orders", 1, values(5, nil)...)
	})
	eventually(t, "committed", func() bool { return committedCount(h, key) == 5 })
	rewrites := func() int {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		return len(h.c.rewriteIntents)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	_, err := h.w.Maintain(ctx, key, false)
	if !errors.Is(err, ErrCompactionDisabled) {
		t.Fatalf("maintain without force: %v, want ErrCompactionDisabled", err)
	}
	for _, want := range []string{"compaction.enabled", "--force"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	if n := rewrites(); n != 0 {
		t.Fatalf("%d compactions committed for a table with compaction disabled", n)
	}

	if _, err := h.w.Maintain(ctx, key, true); err != nil {
		t.Fatalf("maintain --force: %v", err)
	}
	if n := rewrites(); n != 1 {
		t.Fatalf("maintain --force committed %d compactions, want 1", n)
	}
}

// TestSettleRetried: the commit loop has the sink settle a table's
// followers as soon as it holds the role, shows a failure as the table's
// follow-up problem, and retries it with backoff until it clears, with
// no commit to trigger it.
func TestSettleRetried(t *testing.T) {
	h := start(t, "dlq", func(h *harness) {
		h.c.settleFails = 2
		h.k.produce("orders", 1, values(5, nil)...)
	})
	eventually(t, "committed", func() bool { return committedCount(h, key) == 5 })
	settles := func() int {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		return h.c.settles
	}
	problem := func() string {
		ts, _ := h.w.Status().Snapshot()
		if r := ts[key].Reason; strings.Contains(r, "follow-up") {
			return r
		}
		return ""
	}
	eventually(t, "a failed settle shown", func() bool { return strings.Contains(problem(), "unreachable") })
	commits := func() int64 { ts, _ := h.w.Status().Snapshot(); return ts[key].Commits }
	before := commits()
	eventually(t, "settled after two failures", func() bool { return settles() >= 3 && problem() == "" })
	if n := commits(); n != before {
		t.Fatalf("%d commits while settling: the settle was not retried on its own", n-before)
	}
}
