package iceberg

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	upsertsink "github.com/floe-io/floe/sinks/iceberg/upsert"

	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
)

// compactPolicy rewrites every file of a test table (all are small).
var compactPolicy = sink.CompactionPolicy{TargetFileSize: 1 << 30, MinInputFiles: 2, HotMinInputFiles: 2, MaxBytes: 1 << 62}

// compact plans and commits a compaction of the table.
func (h *upsertHarness) compact() sink.RewriteStats {
	h.t.Helper()
	return h.compactWith(compactPolicy)
}

func (h *upsertHarness) compactWith(p sink.CompactionPolicy) sink.RewriteStats {
	h.t.Helper()
	rw, err := h.s.PlanRewrite(h.ctx, h.spec.Key, p)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.s.CommitRewrite(h.ctx, h.spec.Key, rw, h.a, time.Now()); err != nil {
		h.t.Fatal(err)
	}
	return rw.Stats()
}

// files returns how many data and delete files the table has.
func (h *upsertHarness) files() (data, deletes int) {
	h.t.Helper()
	tbl, err := h.cat.LoadTable(h.ctx, h.spec.Ident)
	if err != nil {
		h.t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	fs, err := tbl.FS(h.ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	dels, err := upsertsink.LiveDeleteFiles(fs, tbl.CurrentSnapshot())
	if err != nil {
		h.t.Fatal(err)
	}
	return len(tasks), len(dels)
}

// randomFlush flushes 1-3 random records of 10 keys over two partitions,
// one in five a tombstone.
func (h *upsertHarness) randomFlush(rng *rand.Rand, step int) {
	var recs []*records.Record
	for range 1 + rng.IntN(3) {
		k := rng.IntN(10)
		r := &records.Record{Partition: int32(k % 2), Key: []byte(fmt.Sprintf("k%d", k))}
		if rng.IntN(5) > 0 {
			r.Raw = []byte(fmt.Sprintf("v%d-%d", step, rng.IntN(1000)))
		}
		recs = append(recs, r)
	}
	h.flush(recs)
}

// TestUpsertCompaction: many small upsert commits pile up position-delete
// files; compaction rewrites the data files with the deletes applied and
// removes the delete files in the same commit, so the table reads as the
// model before and after, with no delete file left, and the commits after
// it (whose index must follow the rows' new positions) still read as the
// model. A commit that lands between the rewrite's plan and its commit
// must neither come back undone (rows it deleted resurrected by the
// rewritten files) nor be lost. A rewrite of part of the files (the byte
// budget) keeps the delete files that still target a file it keeps.
func TestUpsertCompaction(t *testing.T) {
	for _, tc := range []struct {
		name    string
		race    func(h *upsertHarness, rng *rand.Rand) // between the plan and the commit
		maxDels int                                    // delete files left after compaction
		budget  int64                                  // bytes per run; 0: all
	}{
		{name: "quiet"},
		{name: "a byte budget for some of the files", budget: 40_000, maxDels: 30},
		{name: "a commit updating every key races the rewrite", race: func(h *upsertHarness, _ *rand.Rand) {
			var recs []*records.Record
			for k := range 10 {
				recs = append(recs, &records.Record{Partition: int32(k % 2), Key: []byte(fmt.Sprintf("k%d", k)), Raw: []byte("raced")})
			}
			h.flush(recs)
			h.commit()
		}},
		{name: "a commit deleting every key races the rewrite", race: func(h *upsertHarness, _ *rand.Rand) {
			var recs []*records.Record
			for k := range 10 {
				recs = append(recs, &records.Record{Partition: int32(k % 2), Key: []byte(fmt.Sprintf("k%d", k))})
			}
			h.flush(recs)
			h.commit()
		}},
		{name: "a commit of new keys races the rewrite", race: func(h *upsertHarness, _ *rand.Rand) {
			h.flush([]*records.Record{{Partition: 0, Key: []byte("new"), Raw: []byte("n")}})
			h.commit()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 3))
			h := newUpsertHarness(t, 2)
			for step := range 40 {
				h.randomFlush(rng, step)
				h.commit()
			}
			h.check("before compaction")
			data, dels := h.files()
			if dels < 30 {
				t.Fatalf("%d delete files after 40 commits, want them piled up", dels)
			}
			pol := compactPolicy
			if tc.budget > 0 {
				pol.MaxBytes = tc.budget
			}
			rw, err := h.s.PlanRewrite(h.ctx, h.spec.Key, pol)
			if err != nil {
				t.Fatal(err)
			}
			if tc.race != nil {
				tc.race(h, rng)
				h.check("the racing commit")
			}
			if err := h.s.CommitRewrite(h.ctx, h.spec.Key, rw, h.a, time.Now()); err != nil {
				t.Fatal(err)
			}
			h.check("after compaction")
			data2, dels2 := h.files()
			// The racing commit's delete file may stay (it targets its
			// own rows only when the rewrite did not replan).
			if dels2 > max(1, tc.maxDels) || dels2 >= dels || data2 >= data {
				t.Fatalf("after compaction %d data files and %d delete files (before %d and %d): want at most %d delete files and fewer data files",
					data2, dels2, data, dels, max(1, tc.maxDels))
			}
			for step := range 10 {
				h.randomFlush(rng, 100+step)
				h.commit()
				h.check(fmt.Sprint("commit after compaction ", step))
			}
			h.compactWith(pol)
			h.check("second compaction")
			if _, dels3 := h.files(); dels3 > max(1, tc.maxDels) {
				t.Fatalf("after the second compaction %d delete files", dels3)
			}
		})
	}
}
