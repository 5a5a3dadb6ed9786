package delta

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/ledger"
)

// realTable is an Iceberg table (no catalog) whose data files iceberg-go's
// writer puts under dir, as sinks/iceberg writes them.
func realTable(t *testing.T, dir string, sc *iceberg.Schema) (*table.Table, Table) {
	t.Helper()
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	meta, err := table.NewMetadata(sc, &spec, table.UnsortedSortOrder, dir, iceberg.Properties{})
	if err != nil {
		t.Fatal(err)
	}
	tbl := table.New(table.Identifier{"shop", "orders"}, meta, dir+"/metadata/v1.metadata.json",
		func(context.Context) (icebergio.IO, error) { return icebergio.LocalFS{}, nil }, nil)
	return tbl, TableOf(meta, "shop.orders")
}

// writeRows writes JSON rows as Parquet data files and describes them as
// sinks/iceberg does.
func writeRows(t *testing.T, tbl *table.Table, rows []string) []File {
	t.Helper()
	as, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, as, strings.NewReader("["+strings.Join(rows, ",")+"]"))
	if err != nil {
		t.Fatal(err)
	}
	batches := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }
	var out []File
	for df, err := range table.WriteRecords(context.Background(), tbl, as, iter.Seq2[arrow.RecordBatch, error](batches),
		table.WithWriteUUID(uuid.New())) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, File{FileDescriptor: ledger.FileDescriptor{
			Path: df.FilePath(), Format: string(df.FileFormat()), SpecID: df.SpecID(), RecordCount: df.Count(),
			SizeBytes: df.FileSizeBytes(), PartValues: partValues(t, df.Partition()),
			NullCounts: maps.Clone(df.NullValueCounts()), LowerBounds: maps.Clone(df.LowerBoundValues()),
			UpperBounds: maps.Clone(df.UpperBoundValues())}})
	}
	return out
}

func partValues(t *testing.T, part map[int]any) map[int][]byte {
	out := map[int][]byte{}
	for id, v := range part {
		s, ok := v.(string)
		if !ok {
			t.Fatalf("partition value %v (%T)", v, v)
		}
		out[id] = lit(t, iceberg.NewLiteral(s))
	}
	return out
}

func interopRows(from, to int) []string {
	var rows []string
	for i := from; i < to; i++ {
		region := []string{"eu", "us", "ap"}[i%3]
		rows = append(rows, fmt.Sprintf(`{"id":%d,"region":%q,"amount":"%d.25","ts":"2026-12-01T10:00:%02d.123456Z","local":"2026-12-01T10:00:00",`+
			`"u":"%s","nested":{"a":%d},"tags":["x","y"],"attrs":[{"key":"k","value":%d}]}`, i, region, i, i%60, uuid.NewString(), i, i))
	}
	return rows
}

// TestDeltaRSReads: delta-rs, a reader no one here wrote, reads a table
// this package logged over real Parquet files: every row once across 12
// versions with a checkpoint, a new column and a compaction; partitions,
// time travel, history with Floe's commit ids. It runs when
// FLOE_DELTA_PYTHON names a python with deltalake installed
// (test/interop/requirements.txt).
func TestDeltaRSReads(t *testing.T) {
	py := os.Getenv("FLOE_DELTA_PYTHON")
	if py == "" {
		t.Skip("FLOE_DELTA_PYTHON is not set: no delta-rs to read with")
	}
	dir := t.TempDir()
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "amount", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 4, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 5, Name: "local", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 6, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 7, Name: "nested", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{{ID: 8, Name: "a", Type: iceberg.PrimitiveTypes.Int32}}}},
		iceberg.NestedField{ID: 9, Name: "tags", Type: &iceberg.ListType{ElementID: 10, Element: iceberg.PrimitiveTypes.String}},
		iceberg.NestedField{ID: 11, Name: "attrs", Type: &iceberg.MapType{KeyID: 12, KeyType: iceberg.PrimitiveTypes.String, ValueID: 13, ValueType: iceberg.PrimitiveTypes.Int64}},
	)
	itbl, dtbl := realTable(t, dir, sc)
	l := openLog(t, LocalStore(dir))
	var all []File
	for seq := int64(1); seq <= 11; seq++ {
		files := writeRows(t, itbl, interopRows(int(seq-1)*30, int(seq)*30))
		all = append(all, files...)
		if _, err := l.Publish(context.Background(), appendCommit(dtbl, seq, files...)); err != nil {
			t.Fatal(err)
		}
	}
	res := readWithDeltaRS(t, py, dir, 5)
	if res.Rows != 330 || res.DistinctIDs != 330 || res.Version != 10 || len(all) != 33 {
		t.Errorf("delta-rs read %+v (%d files), want 330 distinct rows at version 10", res, len(all))
	}
	if res.UType != "binary" || len(res.ULengths) != 1 || res.ULengths[0] != 16 ||
		res.TSType != `timestamp[us, tz=UTC]` || res.LocalType != "timestamp[us]" {
		t.Errorf("types: uuid %s %v, timestamptz %s, timestamp %s", res.UType, res.ULengths, res.TSType, res.LocalType)
	}
	// delta-rs parses the statistics with the columns' types: the data
	// skipping they drive is only as good as that.
	if res.StatsMinID != 0 || res.StatsMaxID != 329 || res.StatsMinTS != "2026-12-01 10:00:00.123000+00:00" ||
		res.StatsMaxAmount != "329.25" || res.FilteredIDs != 30 {
		t.Errorf("statistics as delta-rs reads them: %+v", res)
	}
	if res.TimeTravelRows != 180 {
		t.Errorf("version 5 has %d rows, want 180", res.TimeTravelRows)
	}
	if res.Regions["eu"] != 110 || res.SkippedEU != 110 || strings.Join(res.PartitionColumns, ",") != "region" {
		t.Errorf("partitions %+v", res)
	}
	if res.MinReader != 3 || res.MinWriter != 7 || len(res.CommitIDs) != 11 {
		t.Errorf("protocol %d/%d, %d commit ids", res.MinReader, res.MinWriter, len(res.CommitIDs))
	}
	// Version 11: a new column; version 12: the first two versions' files
	// compacted (the same rows in new files, dataChange false).
	grown, gtbl := realTable(t, dir, iceberg.NewSchema(1, append(sc.Fields(),
		iceberg.NestedField{ID: 14, Name: "note", Type: iceberg.PrimitiveTypes.String})...))
	gtbl.ID = dtbl.ID
	noted := interopRows(330, 360)
	for i := range noted {
		noted[i] = strings.Replace(noted[i], "{", `{"note":"n",`, 1)
	}
	if _, err := l.Publish(context.Background(), appendCommit(gtbl, 12, writeRows(t, grown, noted)...)); err != nil {
		t.Fatal(err)
	}
	compacted := writeRows(t, itbl, interopRows(0, 60))
	first := all[:6] // sequences 1 and 2: three regions each
	if _, err := l.Publish(context.Background(), Commit{Table: gtbl, CommitID: "compaction", Rearrange: true,
		Remove: first, Add: compacted}); err != nil {
		t.Fatal(err)
	}
	res = readWithDeltaRS(t, py, dir, 10)
	if res.Rows != 360 || res.DistinctIDs != 360 || res.Version != 12 || res.TimeTravelRows != 330 {
		t.Errorf("after a new column and a compaction delta-rs read %+v, want 360 distinct rows at version 12", res)
	}
	if res.Operations[0] != "OPTIMIZE" || res.Columns[len(res.Columns)-1] != "note" {
		t.Errorf("history %v, columns %v", res.Operations, res.Columns)
	}
	// Log cleanup keeps the checkpoint and what follows: delta-rs reads
	// the table from the checkpoint alone.
	for v := int64(0); v < 10; v++ {
		if err := os.Remove(dir + "/" + commitName(v)); err != nil {
			t.Fatal(err)
		}
	}
	if res = readWithDeltaRS(t, py, dir, -1); res.Rows != 360 || res.DistinctIDs != 360 {
		t.Errorf("from the checkpoint delta-rs read %+v", res)
	}
}

type deltaRSResult struct {
	Version          int64          `json:"version"`
	Rows             int64          `json:"rows"`
	DistinctIDs      int64          `json:"distinct_ids"`
	Regions          map[string]int `json:"regions"`
	Columns          []string       `json:"columns"`
	MinReader        int            `json:"min_reader"`
	MinWriter        int            `json:"min_writer"`
	Operations       []string       `json:"operations"`
	CommitIDs        []string       `json:"commit_ids"`
	PartitionColumns []string       `json:"partition_columns"`
	SkippedEU        int64          `json:"skipped_eu"`
	TimeTravelRows   int64          `json:"time_travel_rows"`
	UType            string         `json:"u_type"`
	ULengths         []int          `json:"u_lengths"`
	TSType           string         `json:"ts_type"`
	LocalType        string         `json:"local_type"`
	StatsMinID       int64          `json:"stats_min_id"`
	StatsMaxID       int64          `json:"stats_max_id"`
	StatsMinTS       string         `json:"stats_min_ts"`
	StatsMaxAmount   string         `json:"stats_max_amount"`
	FilteredIDs      int64          `json:"filtered_ids"`
}

func readWithDeltaRS(t *testing.T, py, dir string, travel int64) deltaRSResult {
	t.Helper()
	args := []string{"testdata/read_delta.py", dir}
	if travel >= 0 {
		args = append(args, fmt.Sprint(travel))
	}
	out, err := exec.Command(py, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("delta-rs: %v\n%s", err, out)
	}
	var res deltaRSResult
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("delta-rs output %s: %v", out, err)
	}
	t.Logf("delta-rs: %s", lines[len(lines)-1])
	return res
}
