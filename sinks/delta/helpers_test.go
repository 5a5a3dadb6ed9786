package delta

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/ledger"
)

// Column ids of testSchema.
const (
	colID     = 1
	colRegion = 2
	colAmount = 3
	colTS     = 4
	colNested = 5
	colNestA  = 6
	colTags   = 7
	colTagEl  = 8
	colFieldC = 9
)

const tableID = "9c1f3e4a-6d2b-4a8e-9f00-000000000001"

func testSchema(extra ...iceberg.NestedField) *iceberg.Schema {
	fields := []iceberg.NestedField{
		{ID: colID, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		{ID: colRegion, Name: "region", Type: iceberg.PrimitiveTypes.String},
		{ID: colAmount, Name: "amount", Type: iceberg.DecimalTypeOf(10, 2)},
		{ID: colTS, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		{ID: colNested, Name: "nested", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: colNestA, Name: "a", Type: iceberg.PrimitiveTypes.Int32},
		}}},
		{ID: colTags, Name: "tags", Type: &iceberg.ListType{ElementID: colTagEl, Element: iceberg.PrimitiveTypes.String}},
	}
	return iceberg.NewSchema(0, append(fields, extra...)...)
}

func byRegion() iceberg.PartitionSpec {
	return iceberg.NewPartitionSpecID(1, iceberg.PartitionField{SourceIDs: []int{colRegion}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
}

func byDay() iceberg.PartitionSpec {
	return iceberg.NewPartitionSpecID(2, iceberg.PartitionField{SourceIDs: []int{colTS}, FieldID: 1001, Name: "ts_day", Transform: iceberg.DayTransform{}})
}

// testTable is a table at loc, partitioned by region when spec is 1.
func testTable(loc string, spec int) Table {
	return Table{Location: loc, ID: tableID, Name: "shop.orders", Schema: testSchema(),
		Specs: []iceberg.PartitionSpec{*iceberg.UnpartitionedSpec, byRegion(), byDay()}, SpecID: spec}
}

func lit(t *testing.T, v iceberg.Literal) []byte {
	t.Helper()
	b, err := v.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dataFile describes a data file of rows ids [lo, hi] in region (spec 1)
// or unpartitioned (spec 0).
func dataFile(t *testing.T, loc string, spec int32, region string, lo, hi int64) File {
	t.Helper()
	d := ledger.FileDescriptor{
		Path: loc + "/data/" + region + "/" + uuid.NewString() + ".parquet", Format: "PARQUET", SpecID: spec,
		RecordCount: hi - lo + 1, SizeBytes: 1000 + hi,
		NullCounts:  map[int]int64{colID: 0, colRegion: 0, colNestA: 1},
		LowerBounds: map[int][]byte{colID: lit(t, iceberg.NewLiteral(lo)), colRegion: lit(t, iceberg.NewLiteral(region))},
		UpperBounds: map[int][]byte{colID: lit(t, iceberg.NewLiteral(hi)), colRegion: lit(t, iceberg.NewLiteral(region))},
	}
	if spec == 1 {
		d.PartValues = map[int][]byte{1000: lit(t, iceberg.NewLiteral(region))}
	}
	return File{FileDescriptor: d}
}

// fixedClock is a clock tests move by hand.
func fixedClock() func() time.Time {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time { return at }
}

func openLog(t *testing.T, st Store) *Log {
	t.Helper()
	l, err := Open(context.Background(), st, Options{Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// appendCommit publishes sequence seq adding files.
func appendCommit(tbl Table, seq int64, files ...File) Commit {
	return Commit{Table: tbl, Sequence: seq, CommitID: uuid.NewString(),
		Offsets: map[string]int64{"orders/0": seq * 100}, Entries: []string{fmt.Sprintf("entry-%d", seq)}, Add: files}
}

// dvTable is a table that writes deletion vectors, rooted in a new
// temporary directory (returned with it).
func dvTable(t *testing.T) (string, Table) {
	t.Helper()
	dir := t.TempDir()
	tbl := testTable("file://"+dir, 0)
	tbl.DeletionVectors = true
	return dir, tbl
}
