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
