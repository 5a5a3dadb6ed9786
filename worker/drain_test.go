package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/worker/ingest"
)

func consumed(h *harness, n int64) func() bool {
	return func() bool {
		ts, _ := h.w.Status().Snapshot()
		return ts[key].Consumed == n
	}
}

// TestDrain: Drain flushes what is buffered below every flush threshold
// (the commit interval is an hour here), lets the commit loop commit it,
// and leaves the worker fetching nothing, even when partitions are assigned
// to it again. Nothing Drain cannot finish blocks it past its context.
func TestDrain(t *testing.T) {
	cases := []struct {
		name      string
		mode      string
		prep      func(h *harness)
		ready     func(h *harness) bool // before Drain
		timeout   time.Duration
		wantErr   error
		committed int // rows in the table and its dead-letter table
		parts     int // partitions the committed rows come from
		pending   bool
	}{
		{
			name: "buffered records are committed", mode: "dlq",
			prep:      func(h *harness) { h.k.produce("orders", 2, values(30, func(i int) bool { return i%10 == 3 })...) },
			ready:     func(h *harness) bool { return consumed(h, 30)() },
			committed: 30, parts: 2,
		},
		{
			name: "a refused flush is fine", mode: "dlq",
			prep: func(h *harness) {
				h.c.refuseOne = true
				h.k.produce("orders", 2, values(30, nil)...)
			},
			ready: func(h *harness) bool { return consumed(h, 30)() },
		},
		{
			name: "a commit that never succeeds ends with ctx", mode: "dlq",
			prep: func(h *harness) {
				h.c.failCommit = true
				h.k.produce("orders", 2, values(30, nil)...)
			},
			ready:   func(h *harness) bool { return consumed(h, 30)() },
			timeout: 500 * time.Millisecond, wantErr: context.DeadlineExceeded, pending: true,
		},
		{
			name: "a suspended table does not block", mode: "suspend",
			prep: func(h *harness) { h.k.produce("orders", 1, values(20, func(i int) bool { return i == 12 })...) },
			ready: func(h *harness) bool {
				ts, _ := h.w.Status().Snapshot()
				return ts[key].State == status.StateSuspended
			},
			committed: 12, parts: 1,
		},
		{
			name: "a table whose schema never loads does not block", mode: "dlq",
			prep: func(h *harness) {
				h.c.failShape = true
				h.k.produce("orders", 2, values(30, nil)...)
			},
			ready: func(h *harness) bool {
				ts, _ := h.w.Status().Snapshot()
				return ts[key].State == status.StateDegraded
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, tc.mode, func(h *harness) {
				h.cfg = func(c *Config) { c.CommitInterval = time.Hour }
				tc.prep(h)
			})
			eventually(t, "ready to drain", func() bool { return tc.ready(h) })
			if tc.mode == "dlq" && committedCount(h, key, key+"_dlq") != 0 {
				t.Fatal("committed before Drain: the test does not exercise Drain's flush")
			}
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			drain := func() error {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				return h.w.Drain(ctx)
			}
			if err := drain(); !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("Drain = %v, want %v", err, tc.wantErr)
			}
			if got := committedCount(h, key, key+"_dlq"); got != tc.committed {
				t.Fatalf("%d rows committed when Drain returned, want %d", got, tc.committed)
			}
			if got := len(h.c.Pending(key)) > 0; got != tc.pending {
				t.Fatalf("entries pending after Drain: %v, want %v", got, tc.pending)
			}
			if tc.committed > 0 {
				exactlyOnce(t, h, tc.committed, tc.parts, key, key+"_dlq")
			}
			if r := h.w.Rates(); len(r) != 0 {
				t.Fatalf("a drained worker reports fetch rates %v", r)
			}

			// Fetching stays stopped: new records, and partitions moved
			// away and back (a new epoch would start a fetcher), start no
			// reader and no read.
			readers, reads := h.k.counts()
			h.k.produce("orders", 2, values(10, nil)...)
			epochs := map[ledger.TopicPartition]uint64{}
			for p := range int32(2) {
				tp := ledger.TopicPartition{Topic: "orders", Partition: p}
				h.c.reassign(tp, "n2")
				epochs[tp] = h.c.reassign(tp, "n1")
			}
			// A pipeline whose schema never loaded has not begun to fetch;
			// once it loads, it must not begin either.
			h.c.setFailShape(false)
			// The proof that a fetcher would have started by now: the
			// table's status shows the pipeline acted on the new epochs,
			// holding each moved partition because the node drains; it
			// starts a partition's fetcher in that same pass otherwise.
			eventually(t, "the status to show the new epochs held while draining", func() bool {
				ts, _ := h.w.Status().Snapshot()
				held := ts[key].Held
				n := 0
				for tp, e := range epochs {
					hp, ok := held[tp.String()]
					if !ok {
						continue // a partition the topic does not have
					}
					if hp.Epoch != e || hp.Why != ingest.HeldDraining {
						return false
					}
					n++
				}
				return n > 0
			})
			if r2, n2 := h.k.counts(); r2 != readers || n2 != reads {
				t.Fatalf("after Drain: readers %d -> %d, reads %d -> %d", readers, r2, reads, n2)
			}
			if err := drain(); !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("second Drain = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// TestDrainAfterRunEnds: Drain does not wait for commit loops that are gone.
func TestDrainAfterRunEnds(t *testing.T) {
	h := start(t, "dlq", func(h *harness) {
		h.cfg = func(c *Config) { c.CommitInterval = time.Hour }
		h.k.produce("orders", 2, values(10, nil)...)
	})
	eventually(t, "consumed", consumed(h, 10))
	h.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.w.Drain(ctx); !errors.Is(err, ErrStopped) {
		t.Fatalf("Drain after Run = %v, want ErrStopped", err)
	}
}
