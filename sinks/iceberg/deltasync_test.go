package iceberg

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/testing/deltaview"
	"github.com/floe-io/floe/sinks/sink"
)

// TestDeltaCompactionCaughtUp: a compaction whose Delta version was lost
// (compacted by a process that had not opened the log yet, as maintenance
// right after a restart or a failover is; or a crash between the Iceberg
// commit and the Delta publish) reaches the log at the next append as an
// OPTIMIZE whose removes and adds carry dataChange false. A streaming
// reader of the Delta log reads every (partition, offset) exactly once
// and meets no data-changing remove.
func TestDeltaCompactionCaughtUp(t *testing.T) {
	cases := []struct {
		name string
		lose func(c *deltaCase) // before the compaction: what loses its version
	}{
		{"restart before the compaction", func(c *deltaCase) { c.restart() }},
		{"crash between the iceberg commit and the delta version", func(c *deltaCase) {
			c.f.rearranging = func(string) error { return errCrash }
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newDeltaCase(t, true)
			for range 4 {
				c.record(3)
				if err := c.commit(); err != nil {
					t.Fatal(err)
				}
			}
			tc.lose(c)
			rw, err := c.s.PlanRewrite(c.ctx, c.spec.Key, sink.CompactionPolicy{TargetFileSize: 64 << 20, MinInputFiles: 2,
				HotMinInputFiles: 2, MaxBytes: 1 << 30})
			if err != nil || rw == nil || rw.Stats().FilesBefore < 2 {
				t.Fatalf("planning a compaction: %v (%+v)", err, rw)
			}
			if err := c.s.CommitRewrite(c.ctx, c.spec.Key, rw, c.a, time.Now()); err != nil && !errors.Is(err, errCrash) {
				t.Fatal(err)
			}
			c.restart() // the process that lost the version is gone
			c.record(3)
			if err := c.commit(); err != nil {
				t.Fatal(err)
			}
			c.check()
			st := deltaview.ReadStream(t, c.root())
			n := len(st.Operations)
			if n < 3 || st.Operations[n-2] != "OPTIMIZE" {
				t.Fatalf("operations %v: the caught-up compaction is not an OPTIMIZE before the last append", st.Operations)
			}
			if st.DataRemoves != 0 {
				t.Fatalf("%d removes with dataChange true: a streaming reader stops at them (operations %v)", st.DataRemoves, st.Operations)
			}
			if len(st.Rows) != 15 {
				t.Fatalf("a streaming reader read %d distinct offsets, want 15", len(st.Rows))
			}
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range st.Rows {
					if !yield(k) {
						return
					}
				}
			}) {
				if st.Rows[k] != 1 {
					t.Fatalf("a streaming reader read %s %d times", k, st.Rows[k])
				}
			}
		})
	}
}
