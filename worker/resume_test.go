package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/membudget"
	"github.com/floe-io/floe/internal/status"
)

// restartOn starts a second worker on the same brokers and replicated
// state, as another node (or the same one after a crash) would.
func restartOn(t *testing.T, old *harness) *harness {
	t.Helper()
	old.stop()
	h := &harness{k: old.k, c: old.c}
	cfg := Config{
		NodeID: "n1", CommitInterval: 50 * time.Millisecond, TargetFileSize: 1 << 20, Memory: membudget.Of(64 << 20),
		DiscoveryInterval: 50 * time.Millisecond, ReaderErrorGrace: 300 * time.Millisecond,
		Tables: []config.Table{{Topic: "orders", Namespace: "db", Name: "orders", Format: "json", ErrorMode: "suspend", StartOffset: "earliest"}},
	}
	w, err := New(cfg, h.k, h.c, h.c, h.c, status.NewTracker(), nil)
	if err != nil {
		t.Fatal(err)
	}
	h.w = w
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- w.Run(ctx) }()
	t.Cleanup(h.stop)
	return h
}

func suspendedAt(t *testing.T, h *harness, offset int64) {
	t.Helper()
	eventually(t, "suspended", func() bool {
		ts, _ := h.w.Status().Snapshot()
		return ts[key].State == status.StateSuspended && ts[key].SuspendedAt != nil && ts[key].SuspendedAt.Offset == offset
	})
}

// TestResumeReplicated: a resume goes through the replicated state; a
// resume with skip consumes exactly the record the table suspended at, and
// the skip holds for whichever worker fetches the record next (here one
// started after the resume was proposed elsewhere), until it is committed.
func TestResumeReplicated(t *testing.T) {
	bad := func(i int) bool { return i == 12 || i == 15 }
	h := start(t, "suspend", func(h *harness) { h.k.produce("orders", 1, values(20, bad)...) })
	suspendedAt(t, h, 12)
	eventually(t, "prefix committed", func() bool { return committedCount(h, key) == 12 })
	// The reason says how to go on: a plain resume would stop here again.
	if st, _ := h.w.Status().Snapshot(); !strings.HasPrefix(st[key].Reason, "bad record at orders/0 offset 12: ") ||
		!strings.HasSuffix(st[key].Reason, "; skip it with `floe ctl tables resume db.orders --skip` (a plain resume stops at it again)") {
		t.Fatalf("reason %q does not say how to skip the record", st[key].Reason)
	}

	if _, err := h.w.Resume(context.Background(), "db.nope", true); !errors.Is(err, ErrNoSuchTable) {
		t.Fatalf("unknown table: %v", err)
	}

	// Resume with skip through this worker: the skip is replicated.
	res, err := h.w.Resume(context.Background(), "db.orders", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skips) != 1 || res.Skips[0].Offset != 12 || res.Skips[0].Topic != "orders" {
		t.Fatalf("resume result %+v", res)
	}
	suspendedAt(t, h, 15)
	eventually(t, "up to the second bad record", func() bool { return committedCount(h, key) == 14 })
	if gen, skips := h.c.Resume(key); gen != 1 || len(skips) != 0 {
		t.Fatalf("after commit past the skip: gen %d skips %v", gen, skips)
	}
	ts, _ := h.w.Status().Snapshot()
	if ts[key].Skipped != 1 {
		t.Fatalf("skipped %d, want 1", ts[key].Skipped)
	}

	// Another node resumes the table past offset 15 while this worker is
	// gone (as if it crashed before flushing the skip): the next worker
	// skips it without having suspended itself.
	h.stop()
	tp := ledger.TopicPartition{Topic: "orders"}
	if err := h.c.ResumeTable(context.Background(), key, map[ledger.TopicPartition]int64{tp: 15}); err != nil {
		t.Fatal(err)
	}
	h2 := restartOn(t, h)
	eventually(t, "the rest committed", func() bool { return committedCount(h2, key) == 18 })
	rows := h2.c.rows(key)
	for o := range 20 {
		want := 1
		if bad(o) {
			want = 0
		}
		if got := rows[fmtOffset(o)]; got != want {
			t.Fatalf("offset %d committed %d times, want %d", o, got, want)
		}
	}
	ts, _ = h2.w.Status().Snapshot()
	if ts[key].Skipped != 1 || ts[key].State == status.StateSuspended {
		t.Fatalf("second worker: %+v", ts[key])
	}
	eventually(t, "skip cleared", func() bool { _, skips := h2.c.Resume(key); return len(skips) == 0 })
}

func fmtOffset(o int) string { return fmt.Sprintf("0/%d", o) }
