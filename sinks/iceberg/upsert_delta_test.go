package iceberg

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/testing/deltaview"
	"github.com/floe-io/floe/sinks/delta"
)

// withDelta makes the harness's table write a Delta log too, with a
// checkpoint every interval versions.
func (h *upsertHarness) withDelta(interval int64) {
	writes := &atomic.Bool{}
	writes.Store(true)
	h.f = setFollower(h.s, testDeltaTables{n: h.rn, writes: writes}, nil, delta.Options{CheckpointInterval: interval})
}

// checkDelta reads the Delta log with the independent replay (DVs
// applied) and compares it with the model: exactly the latest row of each
// live key, by (partition, offset); with delta-rs too when set up.
func (h *upsertHarness) checkDelta(step string) deltaview.View {
	h.t.Helper()
	tbl, err := h.cat.LoadTable(h.ctx, h.spec.Ident)
	if err != nil {
		h.t.Fatal(err)
	}
	root := strings.TrimPrefix(tbl.Location(), "file://")
	v := deltaview.Read(h.t, root)
	want := map[string]int{}
	for id := range h.model {
		tp, _, _ := strings.Cut(id, "|")
		want[fmt.Sprintf("%s/%d", tp[strings.LastIndex(tp, "/")+1:], h.at[id])] = 1
	}
	if got := v.Rows(h.t, root); !maps.Equal(got, want) {
		h.t.Fatalf("%s: the delta view reads rows %v, want %v", step, got, want)
	}
	if n, distinct, _, ok := deltaview.ReadWithDeltaRS(h.t, root); ok && (n != int64(len(want)) || distinct != n) {
		h.t.Fatalf("%s: delta-rs reads %d rows (%d distinct), want %d", step, n, distinct, len(want))
	}
	return v
}

// TestUpsertDeltaDeletionVectors: an upsert table in [iceberg, delta]
// through random updates and tombstones, several entries per commit at
// times, its log re-read from its checkpoint and tail before every commit
// (the DVs so far come from the log, not memory), then compacted and
// updated again, compacted with commits racing it: a Delta reader applying the DVs sees exactly the model's
// latest row per key at every step, as an Iceberg reader does; every
// version but the compaction's is a commit's own (no sync had to repair
// one).
func TestUpsertDeltaDeletionVectors(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	h := newUpsertHarness(t, 2)
	h.withDelta(4)
	commits := 0
	run := func(steps int, from int) {
		for step := range steps {
			h.randomFlush(rng, from+step)
			if rng.IntN(3) == 0 {
				h.randomFlush(rng, from+step)
			}
			h.f.Forget(h.spec.Key) // the publish re-reads the log
			h.commit()
			commits++
			if step%4 == 0 {
				h.checkDelta(fmt.Sprint("commit ", from+step))
			}
		}
	}
	run(24, 0)
	h.check("before compaction")
	v := h.checkDelta("before compaction")
	dvs := 0
	for _, dv := range v.DVs {
		if dv != nil {
			dvs++
		}
	}
	if dvs == 0 {
		t.Fatal("no live file has a deletion vector after 24 upsert commits")
	}
	h.compact()
	h.check("after compaction")
	h.checkDelta("after compaction")
	run(8, 100)
	// A commit between a compaction's plan and its commit grows the DVs
	// of files the compaction removes: the removes name the grown ones.
	rw, err := h.s.PlanRewrite(h.ctx, h.spec.Key, compactPolicy)
	if err != nil {
		t.Fatal(err)
	}
	run(2, 200)
	if err := h.s.CommitRewrite(h.ctx, h.spec.Key, rw, h.a, time.Now()); err != nil {
		t.Fatal(err)
	}
	h.check("after a raced compaction")
	h.checkDelta("after a raced compaction")
	run(4, 300)
	h.check("after compaction and more commits")
	v = h.checkDelta("after compaction and more commits")
	if len(v.Versions) != commits+2 || len(v.Txns) != commits {
		t.Fatalf("%d versions with %d txns for %d commits and two compactions: a sync repaired the log", len(v.Versions), len(v.Txns), commits)
	}
	if !slices.Contains(v.Changes, false) {
		t.Fatal("no compaction version (dataChange false) in the log")
	}
}

// TestUpsertDeltaCrashAfterPublish: commits of an upsert table crash
// after their Delta version is written and before the entry that records
// it, and are retried after another entry was recorded meanwhile: the
// retry
// is that published version, and the Delta reader still sees exactly the model's latest row per key.
func TestUpsertDeltaCrashAfterPublish(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 4))
	h := newUpsertHarness(t, 2)
	h.withDelta(3)
	crash := &atomic.Bool{}
	h.f.published = func(string, int64) error {
		if crash.CompareAndSwap(true, false) {
			return errCrash
		}
		return nil
	}
	for step := range 12 {
		h.randomFlush(rng, step)
		if step%3 == 1 {
			crash.Store(true)
			if err := h.s.Commit(h.ctx, h.spec.Key, h.queue, h.a, time.Now()); !errors.Is(err, errCrash) {
				t.Fatalf("step %d: commit %v, want the crash", step, err)
			}
			h.randomFlush(rng, 100+step)
			// The retry of every pending entry becomes the published
			// commit (the entries before the new one, planned again);
			// the new entry stays pending for the next commit.
			later := h.queue[len(h.queue)-1]
			h.commit()
			h.queue = append(h.queue, later)
		}
		h.commit()
		h.check(fmt.Sprint("step ", step))
		h.checkDelta(fmt.Sprint("step ", step))
	}
	v := h.checkDelta("end")
	v.CheckContiguous(t)
}
