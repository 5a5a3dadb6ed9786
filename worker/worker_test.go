package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/membudget"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/worker/ingest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const key = "db\x1forders"

type harness struct {
	k      *fakeKafka
	c      *fakeCluster
	w      *Worker
	cancel context.CancelFunc
	done   chan error
	cfg    func(*Config) // adjusts the configuration before New
	log    *slog.Logger  // the worker's logger (nil: its default)
}

func start(t *testing.T, mode string, prep func(*harness)) *harness {
	t.Helper()
	h := &harness{k: newFakeKafka(), c: newFakeCluster("n1")}
	if prep != nil {
		prep(h)
	}
	cfg := Config{
		NodeID: "n1", CommitInterval: 50 * time.Millisecond, TargetFileSize: 1 << 20, Memory: membudget.Of(64 << 20),
		DiscoveryInterval: 50 * time.Millisecond, ReaderErrorGrace: 300 * time.Millisecond,
		Tables: []config.Table{{Topic: "orders", Namespace: "db", Name: "orders", Format: "json", ErrorMode: mode, StartOffset: "earliest"}},
	}
	if h.cfg != nil {
		h.cfg(&cfg)
	}
	w, err := New(cfg, h.k, h.c, h.c, h.c, status.NewTracker(), h.log)
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

func (h *harness) stop() {
	if h.cancel != nil {
		h.cancel()
		<-h.done
		h.cancel = nil
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.For(t, 10*time.Second, what, cond)
}

func values(n int, bad func(i int) bool) []string {
	var out []string
	for i := range n {
		if bad != nil && bad(i) {
			out = append(out, fmt.Sprintf("garbage %d", i))
		} else {
			out = append(out, fmt.Sprintf(`{"i":%d}`, i))
		}
	}
	return out
}

// exactlyOnce checks that tables hold every offset of n records over
// `parts` partitions, once, across the given tables.
func exactlyOnce(t *testing.T, h *harness, n, parts int, tables ...string) {
	t.Helper()
	all := map[string]int{}
	for _, tb := range tables {
		for k, c := range h.c.rows(tb) {
			all[k] += c
		}
	}
	if len(all) != n {
		t.Fatalf("%d distinct offsets committed, want %d", len(all), n)
	}
	for p := range parts {
		for o := range n / parts {
			if c := all[fmt.Sprintf("%d/%d", p, o)]; c != 1 {
				t.Fatalf("offset %d/%d committed %d times", p, o, c)
			}
		}
	}
}

func committedCount(h *harness, tables ...string) int {
	n := 0
	for _, tb := range tables {
		for _, c := range h.c.rows(tb) {
			n += c
		}
	}
	return n
}

func TestDeadLetterMode(t *testing.T) {
	h := start(t, "dlq", func(h *harness) { h.k.produce("orders", 4, values(400, func(i int) bool { return i%10 == 3 })...) })
	eventually(t, "all committed", func() bool { return committedCount(h, key, key+"_dlq") == 400 })
	if got := len(h.c.rows(key + "_dlq")); got != 40 {
		t.Fatalf("dead letters = %d, want 40", got)
	}
	exactlyOnce(t, h, 400, 4, key, key+"_dlq")
	ts, _ := h.w.Status().Snapshot()
	if ts[key].DeadLettered != 40 || ts[key].Consumed != 400 {
		t.Fatalf("status %+v", ts[key])
	}
}

func TestSkipMode(t *testing.T) {
	h := start(t, "skip", func(h *harness) { h.k.produce("orders", 2, values(100, func(i int) bool { return i%4 == 0 })...) })
	eventually(t, "offsets committed", func() bool {
		o0, _ := h.c.Position(key, ledger.TopicPartition{Topic: "orders", Partition: 0})
		o1, _ := h.c.Position(key, ledger.TopicPartition{Topic: "orders", Partition: 1})
		return o0.Committed == 50 && o1.Committed == 50
	})
	if got := committedCount(h, key); got != 75 {
		t.Fatalf("rows = %d, want 75", got)
	}
	ts, _ := h.w.Status().Snapshot()
	if ts[key].Skipped != 25 {
		t.Fatalf("skipped = %d", ts[key].Skipped)
	}
}

func TestSuspendMode(t *testing.T) {
	h := start(t, "suspend", func(h *harness) { h.k.produce("orders", 1, values(20, func(i int) bool { return i == 12 })...) })
	eventually(t, "suspended", func() bool {
		ts, _ := h.w.Status().Snapshot()
		return ts[key].State == status.StateSuspended
	})
	ts, _ := h.w.Status().Snapshot()
	if !strings.Contains(ts[key].Reason, "orders/0 offset 12") || !strings.Contains(ts[key].Reason, "not a JSON object") && !strings.Contains(ts[key].Reason, "invalid JSON") {
		t.Fatalf("reason %q", ts[key].Reason)
	}
	// The partition stays assigned here, and the status says why it is
	// not read.
	if hp, ok := ts[key].Held["orders/0"]; !ok || hp.Why != ingest.HeldSuspended || hp.Epoch == 0 {
		t.Fatalf("held partitions %+v, want orders/0 held: suspended", ts[key].Held)
	}
	eventually(t, "prefix committed", func() bool { return committedCount(h, key) == 12 })
	// With every reader closed nothing more can be fetched, so nothing past
	// the bad record can be recorded: no need to wait and see.
	eventually(t, "fetchers stopped", func() bool { return h.k.openReaders(nil) == 0 })
	o, _ := h.c.Position(key, ledger.TopicPartition{Topic: "orders", Partition: 0})
	if o.End != 12 || committedCount(h, key) != 12 {
		t.Fatalf("went past the bad record: %+v, %d rows", o, committedCount(h, key))
	}
}

func TestStorageFailureIsRetriedAndShown(t *testing.T) {
	h := start(t, "dlq", func(h *harness) {
		h.c.failWrite = 1 << 30
		h.k.produce("orders", 2, values(50, nil)...)
	})
	eventually(t, "degraded", func() bool {
		ts, _ := h.w.Status().Snapshot()
		return ts[key].State == status.StateDegraded && strings.Contains(ts[key].Reason, "bucket unreachable")
	})
	h.c.mu.Lock()
	h.c.failWrite = 0
	h.c.mu.Unlock()
	eventually(t, "caught up", func() bool { return committedCount(h, key) == 50 })
	eventually(t, "running", func() bool {
		ts, _ := h.w.Status().Snapshot()
		return ts[key].State == status.StateRunning
	})
	exactlyOnce(t, h, 50, 2, key)
}

func TestRefusedEntryResumesFromLedger(t *testing.T) {
	h := start(t, "dlq", func(h *harness) {
		h.c.refuseOne = true
		h.k.produce("orders", 2, values(60, nil)...)
	})
	eventually(t, "committed", func() bool { return committedCount(h, key) == 60 })
	h.k.produce("orders", 2, values(60, nil)...)
	eventually(t, "committed more", func() bool { return committedCount(h, key) == 120 })
	exactlyOnce(t, h, 120, 2, key)
}

func TestMovedPartitionStopsFetching(t *testing.T) {
	h := start(t, "dlq", func(h *harness) { h.k.produce("orders", 2, values(20, nil)...) })
	eventually(t, "committed", func() bool { return committedCount(h, key) == 20 })
	tp := ledger.TopicPartition{Topic: "orders", Partition: 1}
	h.c.reassign(tp, "n2")
	eventually(t, "partition released", func() bool {
		ts, _ := h.w.Status().Snapshot()
		_, ok := ts[key].Partitions[tp.String()]
		return !ok
	})
	h.k.produce("orders", 2, values(20, nil)...)
	eventually(t, "partition 0 committed", func() bool {
		o, _ := h.c.Position(key, ledger.TopicPartition{Topic: "orders", Partition: 0})
		return o.Committed == 20
	})
	// One flush carries all of the node's partitions of a table, so the
	// flushes that recorded partition 0's new records would have carried
	// partition 1 had n1 still fetched it; and with its reader closed n1
	// cannot fetch it any more. No need to wait and see.
	eventually(t, "n1's reader of the moved partition closed", func() bool { return h.k.openReaders(&tp) == 0 })
	if o, _ := h.c.Position(key, tp); o.End != 10 {
		t.Fatalf("moved partition still recorded by n1: %+v", o)
	}
}

func TestUnreachableKafkaShown(t *testing.T) {
	h := start(t, "dlq", func(h *harness) { h.k.down = true })
	eventually(t, "degraded", func() bool {
		ts, global := h.w.Status().Snapshot()
		return strings.Contains(global["kafka"], "connection refused") && ts[key].State == status.StateDegraded
	})
	h.k.mu.Lock()
	h.k.down = false
	h.k.mu.Unlock()
	h.k.produce("orders", 1, values(5, nil)...)
	eventually(t, "recovered", func() bool { return committedCount(h, key) == 5 })
}

func TestMissingTopicShown(t *testing.T) {
	h := start(t, "dlq", func(h *harness) { h.k.produce("other", 1, "{}") })
	eventually(t, "topic missing shown", func() bool {
		ts, _ := h.w.Status().Snapshot()
		return ts[key].State == status.StateDegraded && strings.Contains(ts[key].Reason, "topic orders not found")
	})
	h.k.produce("orders", 1, values(3, nil)...)
	eventually(t, "recovered", func() bool { return committedCount(h, key) == 3 })
}

// TestReaderErrorsNeedToPersist: one reader error (kafka-go retries it) does
// not make the table DEGRADED; errors that keep coming past the grace do,
// and the next record clears them.
func TestReaderErrorsNeedToPersist(t *testing.T) {
	h := start(t, "dlq", func(h *harness) { h.k.produce("orders", 1, values(2, nil)...) })
	eventually(t, "committed", func() bool { return committedCount(h, key) == 2 })
	tp := ledger.TopicPartition{Topic: "orders", Partition: 0}
	state := func() string {
		ts, _ := h.w.Status().Snapshot()
		return ts[key].State
	}
	h.k.readerError(tp, errors.New("read tcp: i/o timeout"))
	eventually(t, "the reader error in the partition's status", func() bool {
		ts, _ := h.w.Status().Snapshot()
		ps := ts[key].Partitions[tp.String()]
		return ps != nil && strings.Contains(ps.LastError, "i/o timeout")
	})
	if s := state(); s != status.StateRunning {
		t.Fatalf("one transient reader error made the table %s", s)
	}
	// Errors more often than the discovery interval (50 ms here), for
	// longer than the grace (300 ms): persistent.
	for range 25 {
		h.k.readerError(tp, errors.New("dial tcp: connection refused"))
		time.Sleep(20 * time.Millisecond) // the fault itself: a reader failing every 20 ms, more often than discovery clears it; no condition stands for a rate
	}
	eventually(t, "degraded", func() bool { return state() == status.StateDegraded })
	h.k.produce("orders", 1, values(1, nil)...)
	eventually(t, "recovered", func() bool { return state() == status.StateRunning })
}

// TestReconcileCoalescesChanges: every commit changes the replicated state
// and a reconcile pass reads all of it. A storm of changes (one per
// millisecond for a second, as a thousand committing tables would make)
// gets at most one pass per reconcileGap (and the 1 s tick), not one per
// change.
func TestReconcileCoalescesChanges(t *testing.T) {
	h := start(t, "dlq", func(h *harness) {
		h.cfg = func(c *Config) { c.DiscoveryInterval = time.Hour } // discovery reads Assigned too
	})
	calls := func() int {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		return h.c.assignedCalls
	}
	eventually(t, "the first reconcile pass", func() bool { return calls() > 0 })
	before := calls()
	start := time.Now()
	changes := 0
	for time.Since(start) < time.Second {
		h.c.mu.Lock()
		h.c.notify()
		h.c.mu.Unlock()
		changes++
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	passes := calls() - before
	most := min(int(elapsed/reconcileGap)+4, changes/10) // + the storm's start, a gap's edge, two ticks
	if passes > most || passes < 2 {
		t.Fatalf("%d reconcile passes for %d changes in %s, want 2..%d", passes, changes, elapsed.Round(time.Millisecond), most)
	}
}

// TestCommitGathersASlotAcrossNodes: when a table's partitions sit on two
// nodes, both flush at the same slot and record an entry each; the
// committer holds the first for the other's and commits both in one
// commit, so the table takes one snapshot per interval, not one per node.
// An entry whose companion never comes is committed once the window ends.
func TestCommitGathersASlotAcrossNodes(t *testing.T) {
	h := start(t, "dlq", func(h *harness) {
		h.cfg = func(c *Config) { c.CommitInterval = 2 * time.Second } // a 200 ms gather window
		h.k.produce("orders", 2, values(20, nil)...)
	})
	eventually(t, "committed", func() bool { return committedCount(h, key) == 20 })
	tp0, tp1 := ledger.TopicPartition{Topic: "orders", Partition: 0}, ledger.TopicPartition{Topic: "orders", Partition: 1}
	epoch := h.c.reassign(tp1, "n2")
	eventually(t, "partition 1 released", func() bool {
		ts, _ := h.w.Status().Snapshot()
		_, ok := ts[key].Partitions[tp1.String()]
		return !ok
	})
	calls := func() int {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		return h.c.commitCalls
	}
	record := func(id, node string, tp ledger.TopicPartition, epoch uint64) {
		t.Helper()
		o, _ := h.c.Position(key, tp)
		e := ledger.Entry{ID: id, Node: node, Ranges: []ledger.Range{{TopicPartition: tp, From: o.End, To: o.End + 5, Epoch: epoch}}}
		if err := h.c.RecordFiles(context.Background(), key, e); err != nil {
			t.Fatal(err)
		}
	}
	pendingNone := func() bool { return len(h.c.Pending(key)) == 0 }
	before := calls()
	record("slot-n2", "n2", tp1, epoch) // n2's flush of the slot lands first
	record("slot-n1", "n1", tp0, 1)     // then this node's, well within the window
	eventually(t, "the slot committed", pendingNone)
	if n := calls() - before; n != 1 {
		t.Fatalf("the slot's two entries took %d commits, want 1", n)
	}
	// The hold is real: a lone entry waits out the window (from when the
	// loop first saw it, so at least the window after it was recorded),
	// then commits. Slower machines only make it later.
	before = calls()
	recorded := time.Now()
	record("alone", "n2", tp1, epoch)
	eventually(t, "a lone entry committed after the window", pendingNone)
	if took := time.Since(recorded); took < 200*time.Millisecond {
		t.Fatalf("a lone entry committed %s after it was recorded, within the 200 ms gather window", took)
	}
	if n := calls() - before; n != 1 {
		t.Fatalf("a lone entry took %d commits, want 1", n)
	}
}
