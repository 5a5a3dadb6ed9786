package iceberg

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	upsertsink "github.com/floe-io/floe/sinks/iceberg/upsert"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
)

// regionRow is a partitioned upsert table's row: its region (the table's
// identity partition) and value.
type regionRow struct {
	region string
	v      int64
}

// TestUpsertPartitioned: an upsert table partitioned by identity(region),
// keyed by the Kafka record key, whose keys move between regions, are
// deleted and come back, through commits of several entries and
// compactions: every key reads as exactly one live row (its latest
// region and value) or none, and every position-delete file carries the
// partition of the data files it targets.
func TestUpsertPartitioned(t *testing.T) {
	h := newUpsertHarness(t, 1)
	h.spec = sink.TableSpec{Key: ledger.TableKey([]string{"db", "pu"}), Ident: []string{"db", "pu"}, Format: "json", Mode: "upsert",
		PartitionBy: []config.PartitionField{{Column: "region", Transform: "identity"}}}
	h.a = committer(t, h.rn, h.spec.Key)
	shape := &records.Shape{Kind: records.Struct, Fields: []*records.Field{
		{Name: "region", Shape: &records.Shape{Kind: records.String}}, {Name: "v", Shape: &records.Shape{Kind: records.Long}}}}
	if err := h.s.Prepare(h.ctx, h.spec, shape); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 36))
	regions := []string{"eu", "us", "100%", "a/b", "são paulo"}
	model := map[string]regionRow{}
	for round := range 12 {
		var recs []*records.Record
		for range 1 + rng.IntN(25) {
			k := fmt.Sprintf("k%d", rng.IntN(15))
			if rng.IntN(6) == 0 {
				recs = append(recs, &records.Record{Key: []byte(k)}) // a tombstone
				delete(model, k)
				continue
			}
			row := regionRow{regions[rng.IntN(len(regions))], rng.Int64()}
			recs = append(recs, &records.Record{Key: []byte(k), Raw: []byte("{}"), Value: map[string]any{"region": row.region, "v": row.v}})
			model[k] = row
		}
		h.flush(recs)
		if rng.IntN(2) == 0 {
			h.commit()
			checkPartitioned(t, h, fmt.Sprintf("round %d", round), model)
		}
		if round%4 == 3 {
			h.commit()
			rw, err := h.s.PlanRewrite(h.ctx, h.spec.Key, sink.CompactionPolicy{TargetFileSize: 64 << 20, MinInputFiles: 1,
				HotMinInputFiles: 1, MaxBytes: 1 << 30})
			if err != nil {
				t.Fatalf("round %d: planning compaction: %v", round, err)
			}
			if rw != nil && rw.Stats().FilesBefore > 0 {
				if err := h.s.CommitRewrite(h.ctx, h.spec.Key, rw, h.a, time.Now()); err != nil {
					t.Fatalf("round %d: compaction: %v", round, err)
				}
			}
			checkPartitioned(t, h, fmt.Sprintf("round %d compacted", round), model)
		}
	}
	h.commit()
	checkPartitioned(t, h, "end", model)
}

// checkPartitioned reads the table with iceberg-go's scan (deletes
// applied): one live row per key of model, with its region and value,
// and none else; and every delete file's partition is that of each data
// file it targets.
func checkPartitioned(t *testing.T, h *upsertHarness, step string, model map[string]regionRow) {
	t.Helper()
	tbl, err := h.cat.LoadTable(h.ctx, h.spec.Ident)
	if err != nil {
		t.Fatal(err)
	}
	arr, err := tbl.Scan().ToArrowTable(h.ctx)
	if err != nil {
		t.Fatalf("%s: scan: %v", step, err)
	}
	defer arr.Release()
	col := func(name string) int { return arr.Schema().FieldIndices(name)[0] }
	got := map[string]regionRow{}
	for r := array.NewTableReader(arr, 1024); r.Next(); {
		rec := r.RecordBatch()
		key := rec.Column(col(ColKey)).(*array.Binary)
		region := rec.Column(col("region")).(*array.String)
		v := rec.Column(col("v")).(*array.Int64)
		for i := range int(rec.NumRows()) {
			k := string(key.Value(i))
			if old, dup := got[k]; dup {
				t.Fatalf("%s: key %s has two live rows (%v and %s/%d)", step, k, old, region.Value(i), v.Value(i))
			}
			got[k] = regionRow{region.Value(i), v.Value(i)}
		}
	}
	for k, want := range model {
		if got[k] != want {
			t.Fatalf("%s: key %s reads %v, want %v", step, k, got[k], want)
		}
	}
	if len(got) != len(model) {
		t.Fatalf("%s: %d live rows, want %d (a deleted or moved key came back?)", step, len(got), len(model))
	}
	checkDeletePartitions(t, h, step, tbl)
}

// checkDeletePartitions: every live position-delete file's partition is
// the partition of every live data file it targets.
func checkDeletePartitions(t *testing.T, h *upsertHarness, step string, tbl *table.Table) {
	t.Helper()
	fs, err := tbl.FS(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	part := map[string]string{}
	for _, task := range tasks {
		part[task.File.FilePath()] = upsertsink.PartitionID(task.File)
	}
	dels, err := upsertsink.LiveDeleteFiles(fs, tbl.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dels {
		targets, err := upsertsink.DeleteTargets(h.ctx, fs, d.FilePath())
		if err != nil {
			t.Fatal(err)
		}
		for path := range targets {
			if p, live := part[path]; live && p != upsertsink.PartitionID(d) {
				t.Fatalf("%s: delete file %s is in partition %s, its target %s in %s", step, d.FilePath(), upsertsink.PartitionID(d), path, p)
			}
		}
	}
}
