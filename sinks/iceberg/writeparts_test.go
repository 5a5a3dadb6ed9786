package iceberg

import (
	"context"
	"runtime"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

func TestFileParts(t *testing.T) {
	defer func(w, m int) { maxWriters, minPartRows = w, m }(maxWriters, minPartRows)
	maxWriters, minPartRows = 4, 100
	for _, c := range []struct {
		n, procs      int
		unpartitioned bool
		want          int
	}{
		{n: 0, procs: 2, unpartitioned: true, want: 1},
		{n: 199, procs: 2, unpartitioned: true, want: 1}, // a second part would be under 100
		{n: 200, procs: 2, unpartitioned: true, want: 2},
		{n: 10_000, procs: 2, unpartitioned: true, want: 2}, // one per core
		{n: 10_000, procs: 1, unpartitioned: true, want: 1},
		{n: 10_000, procs: 16, unpartitioned: true, want: 4}, // maxWriters
		{n: 350, procs: 16, unpartitioned: true, want: 3},
		{n: 10_000, procs: 16, unpartitioned: false, want: 1}, // iceberg-go fans out partitions
	} {
		if got := fileParts(c.n, c.unpartitioned, c.procs); got != c.want {
			t.Errorf("fileParts(%d, %v, %d) = %d, want %d", c.n, c.unpartitioned, c.procs, got, c.want)
		}
	}
}

// A large flush of an unpartitioned table becomes one data file per part,
// every record in exactly one of them, in order; writing it again under
// the same id names the same files (a retry overwrites, leaves no
// orphans); a partitioned table's flush is left whole to iceberg-go.
func TestWriteInParts(t *testing.T) {
	defer func(w, m, p int) { maxWriters, minPartRows = w, m; runtime.GOMAXPROCS(p) }(maxWriters, minPartRows, runtime.GOMAXPROCS(0))
	maxWriters, minPartRows = 4, 10
	runtime.GOMAXPROCS(4)
	ctx := context.Background()
	s, cat, _ := newSink(t)
	spec := sink.TableSpec{Key: ledger.TableKey([]string{"db", "parts"}), Ident: []string{"db", "parts"}, Format: "raw"}
	if err := s.Prepare(ctx, spec, nil); err != nil {
		t.Fatal(err)
	}
	recs := rawRecords(45)
	id := uuid.NewString()
	files, err := s.Write(ctx, spec, id, recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Fatalf("%d data files, want 4 parts", len(files))
	}
	var paths []string
	for _, f := range files {
		if f.RecordCount < 10 {
			t.Errorf("part %s holds %d records, under minPartRows", f.Path, f.RecordCount)
		}
		paths = append(paths, f.Path)
	}
	if slices.Sort(paths); len(slices.Compact(slices.Clone(paths))) != 4 {
		t.Fatalf("parts share paths: %v", paths)
	}
	again, err := s.Write(ctx, spec, id, recs)
	if err != nil {
		t.Fatal(err)
	}
	var repaths []string
	for _, f := range again {
		repaths = append(repaths, f.Path)
	}
	if slices.Sort(repaths); !slices.Equal(paths, repaths) {
		t.Fatalf("a retried write named other files:\n%v\n%v", paths, repaths)
	}

	if err := commitForTest(ctx, s, cat, spec, files, ledger.TopicPartition{Topic: "t"}); err != nil {
		t.Fatal(err)
	}
	if got := scanOffsets(t, cat, spec); !slices.Equal(got, offsetsTo(45)) {
		t.Fatalf("offsets read back %v", got)
	}

	// Partitioned by the Kafka partition: one write, left to iceberg-go.
	pspec := sink.TableSpec{Key: ledger.TableKey([]string{"db", "pparts"}), Ident: []string{"db", "pparts"}, Format: "raw"}
	writeRaw(t, s, cat, "pparts", recs[:1], func(tx *table.Transaction) error {
		return tx.UpdateSpec(true).AddIdentity(ColPartition).Commit()
	})
	pfiles, err := s.Write(ctx, pspec, uuid.NewString(), recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(pfiles) != 1 {
		t.Fatalf("partitioned table, one Kafka partition: %d data files, want 1", len(pfiles))
	}
}

// scanOffsets reads the Kafka offsets of every row of the table, sorted.
func scanOffsets(t *testing.T, cat *catalog.Catalog, spec sink.TableSpec) []int64 {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, spec.Ident)
	if err != nil {
		t.Fatal(err)
	}
	arr, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Release()
	var out []int64
	for _, c := range arr.Column(arr.Schema().FieldIndices(ColOffset)[0]).Data().Chunks() {
		out = append(out, c.(*array.Int64).Int64Values()...)
	}
	slices.Sort(out)
	return out
}

func offsetsTo(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}
