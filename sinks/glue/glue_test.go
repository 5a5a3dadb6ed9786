package glue

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/testing/leak"
	"github.com/floe-io/floe/sinks/glue/gluetest"
	"github.com/floe-io/floe/sinks/internal/mirrortest"
	"github.com/floe-io/floe/sinks/sink"
)

func TestMain(m *testing.M) { leak.VerifyTestMain(m) }

// writeMetadata writes version v of a table with every kind of column
// under dir.
func writeMetadata(t *testing.T, dir string, v string) string {
	t.Helper()
	return mirrortest.WriteMetadata(t, dir, v, iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true, Doc: "the id"},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 3, Name: "price", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 4, Name: "tags", Type: &iceberg.ListType{ElementID: 7, Element: iceberg.PrimitiveTypes.String}},
		iceberg.NestedField{ID: 5, Name: "geo", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 8, Name: "lat", Type: iceberg.PrimitiveTypes.Float64}, {ID: 9, Name: "n", Type: iceberg.PrimitiveTypes.Int32}}}},
		iceberg.NestedField{ID: 6, Name: "attrs", Type: &iceberg.MapType{KeyID: 10, KeyType: iceberg.PrimitiveTypes.String, ValueID: 11, ValueType: iceberg.PrimitiveTypes.Binary}},
	))
}

// TestMirrorConformance: Glue passes what every catalog mirror must do.
func TestMirrorConformance(t *testing.T) {
	mirrortest.Run(t, func(t *testing.T) mirrortest.Mirror {
		fake := gluetest.New(t)
		s := newSyncer(t, fake)
		names := func(ident []string) (db, name string) {
			return "floe_" + strings.ToLower(ident[0]), strings.ToLower(ident[1])
		}
		return mirrortest.Mirror{Sync: s.Sync, Drop: s.Drop, SetDown: fake.SetDown, ReadsMetadata: true,
			Location: func(ident []string) string {
				tb, _ := fake.Table(names(ident))
				return tb.Parameters["metadata_location"]
			},
			Alter: func(ident []string, loc string) {
				db, name := names(ident)
				fake.Alter(db, name, map[string]string{"metadata_location": loc})
			},
		}
	})
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

	// A change between read and update fails the update; nothing is lost.
	fake.BeforeUpdate = func(tb *gluetest.Table) { tb.Version++ }
	if err := s.Sync(ctx, st); !errors.Is(err, ErrConflict) {
		t.Fatalf("concurrent change: %v", err)
	}
	fake.BeforeUpdate = nil

	// Only the calls a mirror needs.
	for _, c := range fake.Calls() {
		if !slices.Contains([]string{"AWSGlue.GetDatabase", "AWSGlue.CreateDatabase", "AWSGlue.GetTable", "AWSGlue.CreateTable", "AWSGlue.UpdateTable"}, c) {
			t.Fatalf("unexpected call %s", c)
		}
	}
	// A metadata file that cannot be read is reported as such (the
	// conformance suite checks that nothing changes).
	st.MetadataLocation = "file://" + filepath.Join(dir, "metadata", "00002-missing.metadata.json")
	if err := s.Sync(ctx, st); !errors.Is(err, ErrMetadata) {
		t.Fatalf("missing metadata: %v", err)
	}
}

// TestNamesTooLong: a namespace whose levels join into a database name
// over Glue's 255 characters, or a 255-character table whose Delta entry
// adds the suffix, is refused before any request, naming what is too long;
// a name of exactly 255 passes.
func TestNamesTooLong(t *testing.T) {
	fake := gluetest.New(t)
	s := newSyncer(t, fake) // prefix floe_
	dir := t.TempDir()
	m0 := writeMetadata(t, dir, "00000")
	ctx := context.Background()
	long := strings.Repeat("n", 200)
	for _, tc := range []struct {
		name  string
		ident []string
		sync  func(context.Context, sink.SyncTable) error
		want  string // "" : accepted
	}{
		{"joined namespace", []string{long, long, "orders"}, s.Sync, `glue database name "floe_nnnn`},
		{"delta suffix", []string{"sales", strings.Repeat("t", 255)}, s.Delta().Sync, "glue table name"},
		{"table at the limit", []string{"sales", strings.Repeat("t", 255)}, s.Sync, ""},
		{"database at the limit", []string{strings.Repeat("d", 255-len("floe_")), "orders"}, s.Sync, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(fake.Calls())
			err := tc.sync(ctx, sink.SyncTable{Key: strings.Join(tc.ident, "\x1f"), Ident: tc.ident, MetadataLocation: m0})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("a name of 255 characters: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrNameTooLong) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "(255)") {
				t.Fatalf("err = %v, want ErrNameTooLong naming %q and the limit", err, tc.want)
			}
			if n := len(fake.Calls()); n != before {
				t.Fatalf("%d requests sent to Glue for a name it cannot hold", n-before)
			}
		})
	}
}
