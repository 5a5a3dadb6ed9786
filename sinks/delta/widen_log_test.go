package delta

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
)

// widenedSchema is testSchema with amount's precision and nested.a
// widened, and any extra columns.
func widenedSchema(extra ...iceberg.NestedField) *iceberg.Schema {
	fields := slices.Clone(testSchema().Fields())
	fields[2].Type = iceberg.DecimalTypeOf(12, 2)
	fields[4].Type = structOf(iceberg.NestedField{ID: colNestA, Name: "a", Type: i64})
	return iceberg.NewSchema(1, append(fields, extra...)...)
}

// TestTypeWidening: the version that first uses a widened schema upgrades
// the protocol to typeWidening, allows it in the table properties and
// records the changes; the following versions carry neither; a log read
// back from a checkpoint keeps the history when a column is added; a
// narrowing is refused naming the column.
func TestTypeWidening(t *testing.T) {
	dir := t.TempDir()
	tbl := testTable("file://"+dir, 0)
	l, err := Open(context.Background(), LocalStore(dir), Options{Now: fixedClock(), CheckpointInterval: 3})
	if err != nil {
		t.Fatal(err)
	}
	publish := func(l *Log, tb Table, seq int64, f File) []Action {
		t.Helper()
		res, err := l.Publish(context.Background(), appendCommit(tb, seq, f))
		if err != nil {
			t.Fatalf("sequence %d: %v", seq, err)
		}
		return readVersion(t, dir, res.Version)
	}
	v0 := publish(l, tbl, 1, dataFile(t, tbl.Location, 0, "x", 1, 1))
	if p := v0[1].Protocol; p == nil || p.MinReaderVersion != 1 || p.MinWriterVersion != 1 {
		t.Fatalf("a table that never widened: protocol %+v", v0[1])
	}
	wide := tbl
	wide.Schema = widenedSchema()
	old := dataFile(t, tbl.Location, 0, "x", 2, 2) // written as int: 4-byte bounds
	old.LowerBounds[colNestA], old.UpperBounds[colNestA] = lit(t, iceberg.NewLiteral(int32(-3))), lit(t, iceberg.NewLiteral(int32(9)))
	v1 := publish(l, wide, 2, old)
	p, m := v1[1].Protocol, v1[2].MetaData
	if p == nil || p.MinReaderVersion != 3 || p.MinWriterVersion != 7 ||
		!slices.Equal(p.ReaderFeatures, []string{FeatureTypeWidening}) || !slices.Equal(p.WriterFeatures, []string{FeatureTypeWidening}) {
		t.Fatalf("widening protocol: %+v", v1[1])
	}
	if m == nil || m.Configuration[enableTypeWideningKey] != "true" || m.Configuration["delta.checkpointInterval"] != "3" {
		t.Fatalf("widening metaData: %+v", v1[2])
	}
	checkHistory := func(schema string) {
		t.Helper()
		if got := fieldChanges(t, schema, "amount"); !slices.Equal(got, []typeChange{{"decimal(10,2)", "decimal(12,2)", ""}}) {
			t.Fatalf("amount's history %+v in %s", got, schema)
		}
		if got := fieldChanges(t, schema, "nested", "a"); !slices.Equal(got, []typeChange{{"integer", "long", ""}}) {
			t.Fatalf("nested.a's history %+v in %s", got, schema)
		}
	}
	checkHistory(m.SchemaString)
	if add := v1[len(v1)-1].Add; add == nil || !strings.Contains(add.Stats, `"nested":{"a":-3}`) {
		t.Fatalf("stats of a file written before the widening: %+v", v1[len(v1)-1])
	}
	for seq := int64(3); seq <= 4; seq++ {
		if v := publish(l, wide, seq, dataFile(t, tbl.Location, 0, "x", seq, seq)); len(v) != 3 {
			t.Fatalf("sequence %d under the widened schema: %+v", seq, v)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, checkpointName(3))); err != nil {
		t.Fatalf("no checkpoint: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "_delta_log", "00000000000000000001.json")); err != nil {
		t.Fatal(err)
	}
	reopened := openLog(t, LocalStore(dir))
	grown := wide
	grown.Schema = widenedSchema(iceberg.NestedField{ID: 20, Name: "note", Type: str})
	v4 := publish(reopened, grown, 5, dataFile(t, tbl.Location, 0, "x", 5, 5))
	if v4[1].Protocol != nil || v4[1].MetaData == nil || !strings.Contains(v4[1].MetaData.SchemaString, `"note"`) ||
		v4[1].MetaData.Configuration[enableTypeWideningKey] != "true" {
		t.Fatalf("a column added after the widening: %+v", v4[:2])
	}
	checkHistory(v4[1].MetaData.SchemaString)
	narrowed := grown
	narrowed.Schema = testSchema(iceberg.NestedField{ID: 20, Name: "note", Type: str})
	_, err = reopened.Publish(context.Background(), appendCommit(narrowed, 6, dataFile(t, tbl.Location, 0, "x", 6, 6)))
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "column amount changes type from decimal(12,2) to decimal(10,2)") {
		t.Fatalf("a narrowing: got %v", err)
	}
}

// TestTypeWideningKeepsFeatures: a table already on table features
// (timestampNtz) gains typeWidening beside them.
func TestTypeWideningKeepsFeatures(t *testing.T) {
	cur := &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{FeatureTimestampNtz}, WriterFeatures: []string{FeatureTimestampNtz}}
	p := neededProtocol(cur, []string{FeatureTimestampNtz, FeatureTypeWidening})
	want := []string{FeatureTimestampNtz, FeatureTypeWidening}
	if p == nil || p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || !slices.Equal(p.ReaderFeatures, want) || !slices.Equal(p.WriterFeatures, want) {
		t.Fatalf("protocol %+v, want features %v", p, want)
	}
	if again := neededProtocol(p, want); again != nil {
		t.Fatalf("a protocol with both features upgraded again: %+v", again)
	}
}

// TestUpsertWideningFeatures: an upsert table (deletion vectors) whose
// column widened needs both features; neither may push the other out.
func TestUpsertWideningFeatures(t *testing.T) {
	tbl := Table{DeletionVectors: true}
	got := tbl.features(schemaInfo{features: []string{FeatureTypeWidening}})
	want := []string{featureDV, FeatureTypeWidening}
	if !slices.Equal(got, want) {
		t.Fatalf("features %v, want %v", got, want)
	}
	cur := &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{featureDV}, WriterFeatures: []string{featureDV}}
	if p := neededProtocol(cur, got); p == nil || !slices.Equal(p.ReaderFeatures, want) || !slices.Equal(p.WriterFeatures, want) {
		t.Fatalf("an upsert log widening a column: protocol %+v, want features %v", p, want)
	}
	if plain := (Table{}).features(schemaInfo{features: []string{FeatureTypeWidening}}); !slices.Equal(plain, []string{FeatureTypeWidening}) {
		t.Fatalf("an append table got %v", plain)
	}
}
