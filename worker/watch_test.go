package worker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
)

// startTables starts a worker with n tables, t00 to t<n-1>, each fed by a
// topic of its name with one empty partition, and waits until every
// table's commit loop has made its first round. The commit interval is an
// hour: a loop's later rounds come from state changes only. broadcast
// makes the fake's WatchTable the global Watch, as before per-table
// watches.
func startTables(t *testing.T, n int, broadcast bool) (*harness, []string) {
	t.Helper()
	keys := make([]string, n)
	var tables []config.Table
	h := start(t, "dlq", func(h *harness) {
		h.c.broadcast = broadcast
		for i := range n {
			name := fmt.Sprintf("t%02d", i)
			keys[i] = ledger.TableKey([]string{"db", name})
			tables = append(tables, config.Table{Topic: name, Namespace: "db", Name: name, Format: "json", ErrorMode: "dlq", StartOffset: "earliest"})
			h.k.produce(name, 1)
		}
		h.cfg = func(c *Config) { c.Tables, c.CommitInterval = tables, time.Hour }
	})
	eventually(t, "every table's commit loop running", func() bool {
		for _, k := range keys {
			if h.c.rounds(k) == 0 {
				return false
			}
		}
		return true
	})
	return h, keys
}

// flushAndCommit records the i-th one-record entry of table key (topic
// t, partition 0), as a pipeline's flush would, and waits until the
// table's commit loop has committed it: two applied entries, RecordFiles
// and the commit.
func flushAndCommit(t *testing.T, h *harness, key, topic string, i int) {
	t.Helper()
	e := ledger.Entry{ID: fmt.Sprintf("%s-%d", topic, i), Node: "n1", Records: 1,
		Ranges: []ledger.Range{{TopicPartition: ledger.TopicPartition{Topic: topic}, From: int64(i), To: int64(i + 1), Epoch: 1}}}
	if err := h.c.RecordFiles(context.Background(), key, e); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		changed := h.c.Watch() // not WatchTable, whose calls count as a loop's
		if len(h.c.Pending(key)) == 0 {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("entry %s not committed", e.ID)
		}
	}
}

// TestCommitLoopWakesOnItsTable: flushes recorded and committed on table
// a wake a's commit loop, never b's; a change to b's role wakes b's.
func TestCommitLoopWakesOnItsTable(t *testing.T) {
	h, keys := startTables(t, 2, false)
	a, b := keys[0], keys[1]
	before, aBefore := h.c.rounds(b), h.c.rounds(a)
	for i := range 20 {
		flushAndCommit(t, h, a, "t00", i)
	}
	if n := h.c.rounds(a) - aBefore; n < 20 {
		t.Fatalf("a's commit loop made %d rounds for 20 commits", n)
	}
	if n := h.c.rounds(b) - before; n != 0 {
		t.Fatalf("40 changes to table a woke b's commit loop %d times, want 0", n)
	}
	// The same role again: an Assign naming b, as the FSM would apply it.
	h.c.setCommitter(b, ledger.Assignment{Node: "n1", Epoch: 1})
	eventually(t, "a change to b waking b's loop", func() bool { return h.c.rounds(b) > before })
}

// TestCommitLoopWakeups measures how many commit loops each applied entry
// wakes, with 50 tables and 1,000 RecordFiles on one of them (committed
// elsewhere, so no loop commits), each made once every loop waits again,
// as entries spaced by real commit latency find them: through the global
// Watch (as before) and through WatchTable. go test -v -run
// TestCommitLoopWakeups shows the figures.
func TestCommitLoopWakeups(t *testing.T) {
	const tables, n = 50, 1000
	for _, broadcast := range []bool{true, false} {
		mode := "WatchTable"
		if broadcast {
			mode = "Watch (before)"
		}
		h, keys := startTables(t, tables, broadcast)
		h.c.setCommitter(keys[0], ledger.Assignment{Node: "n2", Epoch: 2})
		settle(t, h, keys)
		woken, start := h.c.wakeups(), time.Now()
		for i := range n {
			e := ledger.Entry{ID: fmt.Sprintf("t00-%d", i), Node: "n1", Records: 1,
				Ranges: []ledger.Range{{TopicPartition: ledger.TopicPartition{Topic: "t00"}, From: int64(i), To: int64(i + 1), Epoch: 1}}}
			if err := h.c.RecordFiles(context.Background(), keys[0], e); err != nil {
				t.Fatal(err)
			}
			settle(t, h, keys)
		}
		woken = h.c.wakeups() - woken
		t.Logf("%s: %d tables, %d RecordFiles on one table in %v: %d commit loop wakeups, %.2f per applied entry",
			mode, tables, n, time.Since(start).Round(time.Millisecond), woken, float64(woken)/n)
		h.stop()
		if !broadcast && woken != n {
			t.Fatalf("with WatchTable, %d entries on one table woke %d commit loops, want %d", n, woken, n)
		}
	}
}

// settle waits until every table's commit loop waits for its next change:
// each WatchTable call wakes it to look again.
func settle(t *testing.T, h *harness, keys []string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		ok, next := h.c.waiting(keys)
		if ok {
			return
		}
		select {
		case <-next:
		case <-deadline:
			t.Fatal("timed out waiting for every commit loop to wait")
		}
	}
}
