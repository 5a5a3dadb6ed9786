package iceberg

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/ingest"
)

// TestParallelBatches: batches come out in order whatever order they are
// built in; an error ends the sequence at its batch; stopping early
// releases every batch built and not taken, and no builder outlives the
// call.
func TestParallelBatches(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for _, c := range []struct {
		name     string
		n, take  int
		failAt   int // -1: none
		builders int
	}{
		{"all, 2 builders", 9, 9, -1, 2},
		{"all, 4 builders", 9, 9, -1, 4},
		{"stop after 3", 9, 3, -1, 3},
		{"error at 5", 9, 9, 5, 2},
		{"error at 0", 4, 4, 0, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			build := func(i int, _ *jsonRows) (arrow.RecordBatch, error) {
				if i == c.failAt {
					return nil, fmt.Errorf("batch %d: %w", i, errBuild)
				}
				b := array.NewRecordBuilder(mem, schema)
				defer b.Release()
				b.Field(0).(*array.Int64Builder).Append(int64(i))
				return b.NewRecordBatch(), nil
			}
			var got []int64
			var gotErr error
			parallelBatches(c.n, c.builders, build, func() *jsonRows { return nil }, func(b arrow.RecordBatch, err error) bool {
				if err != nil {
					gotErr = err
					return false
				}
				got = append(got, b.Column(0).(*array.Int64).Value(0))
				b.Release()
				return len(got) < c.take
			})
			want := min(c.take, c.n)
			if c.failAt >= 0 {
				want = c.failAt
				if !errors.Is(gotErr, errBuild) {
					t.Fatalf("error %v, want batch %d's", gotErr, c.failAt)
				}
			}
			if len(got) != want {
				t.Fatalf("took %d batches %v, want %d", len(got), got, want)
			}
			for i, v := range got {
				if v != int64(i) {
					t.Fatalf("batches out of order: %v", got)
				}
			}
		})
	}
}

var errBuild = errors.New("cannot build")

// TestRecordBatchesAcrossBuilders: a flush of several batches, built in
// parallel, holds the rows of the records in their order, as one batch
// built alone would.
func TestRecordBatchesAcrossBuilders(t *testing.T) {
	_, sc, as := jsonRowSchema(t, `{"i":1,"s":"x"}`)
	n := 2*batchRows + 10
	recs := make([]*records.Record, n)
	for i := range recs {
		recs[i] = &records.Record{Topic: "t", Partition: int32(i % 3), Offset: int64(i), JSON: fmt.Appendf(nil, `{"i":%d,"s":"v%d"}`, i, i)}
		if i%7 == 0 { // a decoded one among them
			recs[i].JSON, recs[i].Value = nil, map[string]any{"i": int64(i), "s": fmt.Sprintf("v%d", i)}
		}
	}
	var rows int
	for b, err := range recordBatches(sc, as, recs, false) {
		if err != nil {
			t.Fatal(err)
		}
		want, err := buildBatch(sc.Fields(), as, recs[rows:rows+int(b.NumRows())], false, newJSONRows(sc.Fields()))
		if err != nil {
			t.Fatal(err)
		}
		if !array.RecordEqual(b, want) {
			t.Fatalf("batch at row %d differs from the same records built alone", rows)
		}
		offsets := b.Column(b.Schema().FieldIndices(ColOffset)[0]).(*array.Int64)
		if offsets.Value(0) != int64(rows) {
			t.Fatalf("batch at row %d starts at offset %d", rows, offsets.Value(0))
		}
		rows += int(b.NumRows())
		b.Release()
		want.Release()
	}
	if rows != n {
		t.Fatalf("%d rows, want %d", rows, n)
	}
}

// BenchmarkFlushJSON writes one flush of 200,000 bench orders kept as JSON
// to Parquet: one Arrow builder and one file, the default builders and
// one file, and the defaults (a file per core, writeparts.go):
//
//	go test -run '^$' -bench FlushJSON -benchtime 3x ./sinks/iceberg/
func BenchmarkFlushJSON(b *testing.B) {
	s, _, _ := newSink(b)
	ctx := context.Background()
	const n = 200_000
	recs := make([]*records.Record, n)
	for i := range recs {
		recs[i] = &records.Record{Topic: "t", Partition: int32(i % 8), Offset: int64(i), JSON: []byte(benchOrder(i))}
	}
	shape := &records.Shape{Kind: records.Struct}
	if _, err := ingest.DecodeJSON(shape, recs[0].JSON); err != nil {
		b.Fatal(err)
	}
	spec := sink.TableSpec{Key: ledger.TableKey([]string{"db", "orders"}), Ident: []string{"db", "orders"}, Format: "json"}
	if err := s.Prepare(ctx, spec, shape); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ builders, writers int }{{1, 1}, {maxBuilders, 1}, {maxBuilders, maxWriters}} {
		b.Run(fmt.Sprintf("builders=%d/writers=%d", c.builders, c.writers), func(b *testing.B) {
			defer func(bs, ws int) { maxBuilders, maxWriters = bs, ws }(maxBuilders, maxWriters)
			maxBuilders, maxWriters = c.builders, c.writers
			b.SetBytes(int64(n * len(recs[0].JSON)))
			for b.Loop() {
				if _, err := s.Write(ctx, spec, uuid.NewString(), recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// benchOrder is floe bench's order record (cmd/floe benchRecord).
func benchOrder(i int) string {
	return fmt.Sprintf(`{"order_id":%d,"customer_id":"cust-%08d","status":"%s","amount":%d.%02d,"currency":"EUR",`+
		`"items":[{"sku":"sku-%06d","qty":%d,"price":%d.99},{"sku":"sku-%06d","qty":%d,"price":%d.49}],`+
		`"shipping":{"name":"Customer %d","street":"%d Long Street Name","city":"Berlin","zip":"%05d","country":"DE","express":%t},`+
		`"created_at":"2026-11-29T12:%02d:%02d.%03dZ","note":"%s"}`,
		i, i%100000, []string{"new", "paid", "shipped", "delivered"}[i%4], i%1000, i%100, i%999999, 1+i%5, i%200, (i*7)%999999, 1+i%3, i%50,
		i, i%999, i%99999, i%2 == 0, i%60, i%60, i%1000, strings.Repeat("x", 60+i%20))
}
