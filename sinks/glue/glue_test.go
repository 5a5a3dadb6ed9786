package glue

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"go.uber.org/goleak"

	"github.com/floe-io/floe/sinks/glue/gluetest"
	"github.com/floe-io/floe/sinks/sink"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// writeMetadata writes version v of a table's metadata under dir.
func writeMetadata(t *testing.T, dir string, v string) string {
	t.Helper()
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true, Doc: "the id"},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 3, Name: "price", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 4, Name: "tags", Type: &iceberg.ListType{ElementID: 7, Element: iceberg.PrimitiveTypes.String}},
		iceberg.NestedField{ID: 5, Name: "geo", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 8, Name: "lat", Type: iceberg.PrimitiveTypes.Float64}, {ID: 9, Name: "n", Type: iceberg.PrimitiveTypes.Int32}}}},
		iceberg.NestedField{ID: 6, Name: "attrs", Type: &iceberg.MapType{KeyID: 10, KeyType: iceberg.PrimitiveTypes.String, ValueID: 11, ValueType: iceberg.PrimitiveTypes.Binary}},
	)
	meta, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file://"+dir, iceberg.Properties{table.PropertyFormatVersion: "2"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "metadata", v+"-x.metadata.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return "file://" + path
}

func newSyncer(t *testing.T, fake *gluetest.Server) *Syncer {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s, err := New(context.Background(), Config{Region: "eu-west-1", Endpoint: fake.URL, DatabasePrefix: "floe_", SkipArchive: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSync(t *testing.T) {
	fake := gluetest.New(t)
	s := newSyncer(t, fake)
	dir := t.TempDir()
	m0, m1 := writeMetadata(t, dir, "00000"), writeMetadata(t, dir, "00001")
	ctx := context.Background()
	st := sink.SyncTable{Key: "Sales\x1fOrders", Ident: []string{"Sales", "Orders"}, MetadataLocation: m0}

	// First sync: database and table created.
	if err := s.Sync(ctx, st); err != nil {
		t.Fatal(err)
	}
	if !fake.Database("floe_sales") {
		t.Fatal("database floe_sales not created")
	}
	tb, ok := fake.Table("floe_sales", "orders")
	if !ok {
		t.Fatalf("table not created; calls %v", fake.Calls())
	}
	if tb.TableType != "EXTERNAL_TABLE" || tb.Parameters["table_type"] != "ICEBERG" || tb.Parameters["metadata_location"] != m0 || tb.Location != "file://"+dir {
		t.Fatalf("created %+v", tb)
	}
	if _, ok := tb.Parameters["previous_metadata_location"]; ok {
		t.Fatalf("a first sync names a previous location: %+v", tb.Parameters)
	}
	wantCols := []gluetest.Column{
		{Name: "id", Type: "bigint", Comment: "the id"}, {Name: "ts", Type: "timestamp"}, {Name: "price", Type: "decimal(10,2)"},
		{Name: "tags", Type: "array<string>"}, {Name: "geo", Type: "struct<lat:double,n:int>"}, {Name: "attrs", Type: "map<string,binary>"},
	}
	if len(tb.Columns) != len(wantCols) {
		t.Fatalf("columns %+v", tb.Columns)
	}
	for i, c := range wantCols {
		got := tb.Columns[i]
		if got.Name != c.Name || got.Type != c.Type || got.Comment != c.Comment || got.Parameters["iceberg.field.id"] == "" {
			t.Errorf("column %d = %+v, want %+v", i, got, c)
		}
	}
	if tb.Columns[0].Parameters["iceberg.field.optional"] != "false" || tb.Columns[1].Parameters["iceberg.field.optional"] != "true" {
		t.Errorf("optional flags %+v", tb.Columns[:2])
	}

	// Next commit: optimistic update with the VersionId, no archive.
	st.MetadataLocation, st.PreviousMetadataLocation = m1, m0
	if err := s.Sync(ctx, st); err != nil {
		t.Fatal(err)
	}
	tb, _ = fake.Table("floe_sales", "orders")
	if tb.Parameters["metadata_location"] != m1 || tb.Parameters["previous_metadata_location"] != m0 || !tb.SkipArchive || tb.Version != 2 {
		t.Fatalf("updated %+v", tb)
	}

	// Someone edits the entry by hand: the next sync overwrites it.
	fake.Alter("floe_sales", "orders", map[string]string{"metadata_location": "s3://elsewhere/00009-y.metadata.json", "owner": "someone"})
	if err := s.Sync(ctx, st); err != nil {
		t.Fatal(err)
	}
	tb, _ = fake.Table("floe_sales", "orders")
	if tb.Parameters["metadata_location"] != m1 || tb.Parameters["owner"] != "" {
		t.Fatalf("hand edit not overwritten: %+v", tb.Parameters)
	}

	// A change between read and update fails the update; nothing is lost.
	fake.BeforeUpdate = func(tb *gluetest.Table) { tb.Version++ }
	if err := s.Sync(ctx, st); !errors.Is(err, ErrConflict) {
		t.Fatalf("concurrent change: %v", err)
	}
	fake.BeforeUpdate = nil

	// Never backwards: an entry already at a later version stays.
	st.MetadataLocation, st.PreviousMetadataLocation = m0, ""
	if err := s.Sync(ctx, st); err != nil {
		t.Fatal(err)
	}
	if tb, _ = fake.Table("floe_sales", "orders"); tb.Parameters["metadata_location"] != m1 {
		t.Fatalf("moved backwards to %s", tb.Parameters["metadata_location"])
	}

	// Glue down: a clear error, and nothing written.
	fake.SetDown(true)
	st.MetadataLocation = m1
	if err := s.Sync(ctx, st); err == nil {
		t.Fatal("sync to a down glue succeeded")
	}
	fake.SetDown(false)
	for _, c := range fake.Calls() {
		if !slices.Contains([]string{"AWSGlue.GetDatabase", "AWSGlue.CreateDatabase", "AWSGlue.GetTable", "AWSGlue.CreateTable", "AWSGlue.UpdateTable"}, c) {
			t.Fatalf("unexpected call %s", c)
		}
	}
	// A metadata file that cannot be read is reported as such.
	st.MetadataLocation = "file://" + filepath.Join(dir, "metadata", "00002-missing.metadata.json")
	if err := s.Sync(ctx, st); !errors.Is(err, ErrMetadata) {
		t.Fatalf("missing metadata: %v", err)
	}
}
