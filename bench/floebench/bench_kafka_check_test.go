package floebench

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
)

type po struct {
	p int32
	o int64
}

// offsetsTable writes a table of _kafka_partition and _kafka_offset
// columns, one append per batch, and returns its directory.
func offsetsTable(t *testing.T, batches [][]po) string {
	t.Helper()
	ctx := context.Background()
	wh := filepath.Join(t.TempDir(), "wh")
	cat, err := hadoop.NewCatalog("t", "file://"+wh, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{"bench"}, nil); err != nil {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "_kafka_partition", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 2, Name: "_kafka_offset", Type: iceberg.PrimitiveTypes.Int64})
	tbl, err := cat.CreateTable(ctx, table.Identifier{"bench", "t"}, sc)
	if err != nil {
		t.Fatal(err)
	}
	as, err := table.SchemaToArrowSchema(sc, nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range batches {
		b := array.NewRecordBuilder(memory.DefaultAllocator, as)
		for _, r := range batch {
			b.Field(0).(*array.Int32Builder).Append(r.p)
			b.Field(1).(*array.Int64Builder).Append(r.o)
		}
		rec := b.NewRecordBatch()
		rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		if tbl, err = tbl.Append(ctx, rdr, nil); err != nil {
			t.Fatal(err)
		}
		rdr.Release()
		rec.Release()
		b.Release()
	}
	return filepath.Join(wh, "bench", "t")
}

// TestCheckTable checks the benchmark's own checker: it must find every
// duplicate, gap and stray offset, and date acknowledged records by the
// append that added them.
func TestCheckTable(t *testing.T) {
	acked := time.Now().Add(-time.Hour)
	cases := []struct {
		name               string
		batches            [][]po
		ends               map[int32]int64
		acks               []steadyAck
		dups, missing, out int64
		fresh, unseen      int
		ok                 bool
	}{
		{name: "every offset once over two appends", batches: [][]po{{{0, 0}, {1, 0}}, {{0, 1}, {1, 1}}},
			ends: map[int32]int64{0: 2, 1: 2}, acks: []steadyAck{{0, 1, acked}, {1, 1, acked}}, fresh: 2, ok: true},
		{name: "a duplicate in a later append", batches: [][]po{{{0, 0}, {0, 1}}, {{0, 1}}},
			ends: map[int32]int64{0: 2}, dups: 1},
		{name: "a gap", batches: [][]po{{{0, 0}, {0, 2}}}, ends: map[int32]int64{0: 3}, missing: 1},
		{name: "an offset past the end and a partition the topic lacks", batches: [][]po{{{0, 0}, {0, 1}, {3, 0}}},
			ends: map[int32]int64{0: 1}, out: 2},
		{name: "an acknowledged record never committed", batches: [][]po{{{0, 0}}},
			ends: map[int32]int64{0: 1}, acks: []steadyAck{{0, 0, acked}, {0, 1, acked}}, fresh: 1, unseen: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := checkTable(context.Background(), offsetsTable(t, c.batches), c.ends, c.acks)
			if err != nil {
				t.Fatal(err)
			}
			if got.dups != c.dups || got.missing != c.missing || got.out != c.out || got.unseen != c.unseen || len(got.freshness) != c.fresh {
				t.Errorf("got dups %d missing %d out %d unseen %d fresh %d, want %d %d %d %d %d",
					got.dups, got.missing, got.out, got.unseen, len(got.freshness), c.dups, c.missing, c.out, c.unseen, c.fresh)
			}
			if ok := got.verdict()[:2] == "OK"; ok != c.ok {
				t.Errorf("verdict %q, want OK %v", got.verdict(), c.ok)
			}
			for _, f := range got.freshness {
				if f < 59*time.Minute || f > 2*time.Hour {
					t.Errorf("freshness %s of a record acknowledged an hour ago", f)
				}
			}
		})
	}
}

// TestDrainFigures checks the drain time, the rate between commits and the
// first commit read from a table's snapshots.
func TestDrainFigures(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	cases := []struct {
		name         string
		snaps        []snapInfo
		drain, first time.Duration
		inner        float64
		est          time.Duration
	}{
		// 30 records/s in the interval before the last: the 600 left
		// would take 20 s, longer than the last interval, so the drain
		// stands as committed.
		{"empty snapshot first, three appends", []snapInfo{{at(1), 0, 0}, {at(10), 100, 100}, {at(20), 300, 400}, {at(30), 600, 1000}}, 30 * time.Second, 10 * time.Second, 45, 30 * time.Second},
		// 60 records/s before the last interval: the 300 left took 5 s of
		// it, and the process waited 5 s for the commit.
		{"done halfway through the last interval", []snapInfo{{at(10), 100, 100}, {at(20), 600, 700}, {at(30), 300, 1000}}, 30 * time.Second, 10 * time.Second, 45, 25 * time.Second},
		{"steady appends after the backlog change nothing", []snapInfo{{at(10), 100, 100}, {at(20), 600, 700}, {at(30), 300, 1000}, {at(40), 5, 1005}}, 30 * time.Second, 10 * time.Second, 45, 25 * time.Second},
		{"two appends: too few to say", []snapInfo{{at(10), 500, 500}, {at(20), 500, 1000}}, 20 * time.Second, 10 * time.Second, 50, 20 * time.Second},
		{"the backlog in one append", []snapInfo{{at(12), 1000, 1000}}, 12 * time.Second, 12 * time.Second, 0, 12 * time.Second},
		{"later appends after the backlog are not the drain", []snapInfo{{at(5), 1000, 1000}, {at(15), 10, 1010}}, 5 * time.Second, 5 * time.Second, 0, 5 * time.Second},
		{"never complete", []snapInfo{{at(5), 100, 100}, {at(15), 10, 110}}, 0, 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runResult{backlog: 1000}
			r.drainFigures(c.snaps, start)
			if r.drain != c.drain || r.firstCommit != c.first || r.innerRate != c.inner || r.estDrain != c.est {
				t.Errorf("drain %s first %s inner %.1f est %s, want %s %s %.1f %s", r.drain, r.firstCommit, r.innerRate, r.estDrain, c.drain, c.first, c.inner, c.est)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	ds := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Second
		}
		return out
	}
	cases := []struct {
		name string
		in   []time.Duration
		q    float64
		want time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"median of unsorted", ds(5, 1, 3), 0.5, 3 * time.Second},
		{"p99 of 1..100 is 99 (nearest rank)", ds(hundred()...), 0.99, 99 * time.Second},
		{"p50 of 1..100 is 50", ds(hundred()...), 0.5, 50 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := percentile(c.in, c.q); got != c.want {
				t.Errorf("percentile %.2f = %s, want %s", c.q, got, c.want)
			}
		})
	}
}

// hundred is 100 down to 1.
func hundred() []int {
	out := make([]int, 100)
	for i := range out {
		out[i] = 100 - i
	}
	return out
}

// TestParseFormats: the formats list is checked, with the flag named.
func TestParseFormats(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{"json", []string{"json"}, ""},
		{"json, avro,protobuf,avro", []string{"json", "avro", "protobuf"}, ""},
		{"json,parquet", nil, `--kafka-formats: "parquet" is not one of json, avro, protobuf`},
	} {
		got, err := parseFormats(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestFormatTablePerByte: formats are compared per byte of Kafka value,
// not per record: Avro at half JSON's size and the same records/s is half
// JSON's MB/s.
func TestFormatTablePerByte(t *testing.T) {
	rs := []runResult{
		{name: "raw", who: "raw"},
		{name: "floe, 8 partitions", who: "floe", format: "json", backlog: 1_000_000, drain: 10 * time.Second, cpuSec: 20, bytesPerRecord: 500},
		{name: "baseline, 8 partitions", who: "baseline", format: "json", backlog: 1_000_000, drain: 5 * time.Second},
		{name: "floe, 8 partitions, avro", who: "floe-avro", format: "avro", backlog: 1_000_000, drain: 10 * time.Second, cpuSec: 10, bytesPerRecord: 250},
	}
	var out strings.Builder
	printFormatTable(&out, rs)
	for _, want := range []string{
		"| floe, 8 partitions | 500 | 100000 | 50.0 (1.00×) | 40.0 (1.00×) |",
		"| floe, 8 partitions, avro | 250 | 100000 | 25.0 (0.50×) | 40.0 (1.00×) |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "baseline") {
		t.Errorf("the format table lists the baseline:\n%s", out.String())
	}
}

// TestReadSnapshotsOfGzipMetadata: the real-broker bench follows a table
// whose metadata files are gzip-compressed (new tables' default since
// protocol level 6); before, it waited out its 30-minute timeout on them.
func TestReadSnapshotsOfGzipMetadata(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(`{"snapshots":[{"timestamp-ms":1000,"summary":{"added-records":"5","total-records":"5"}},{"timestamp-ms":2000,"summary":{"added-records":"7","total-records":"12"}}]}`))
	_ = zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "metadata", "00002-u.gz.metadata.json"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	snaps, err := readSnapshots(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(snaps) != 2 || snaps[1].total != 12 || snaps[1].added != 7 {
		t.Fatalf("snapshots %+v", snaps)
	}
}
