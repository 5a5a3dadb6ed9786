package worker

import (
	"testing"
	"time"

	"github.com/floe-io/floe/internal/config"
)

// TestBacklogTailFlushedOnCatchUp: a backlog is flushed by size, and the
// records after its last full file are flushed as soon as the pipeline
// reaches the partitions' ends, not at the commit-interval tick (an hour
// here, so the test would time out waiting for it).
func TestBacklogTailFlushedOnCatchUp(t *testing.T) {
	const n = 3000
	h := start(t, "dlq", func(h *harness) {
		h.k.produce("orders", 2, values(n, nil)...)
		h.cfg = func(c *Config) {
			c.CommitInterval = time.Hour
			c.TargetFileSize = config.ByteSize(16 << 10)
		}
	})
	eventually(t, "the whole backlog committed", func() bool { return committedCount(h, key) == n })
	exactlyOnce(t, h, n, 2, key)
	ts, _ := h.w.Status().Snapshot()
	if flushes := ts[key].Flushes; flushes < 3 {
		t.Fatalf("%d flushes: the backlog was not flushed by size, so the test shows nothing", flushes)
	}

}
