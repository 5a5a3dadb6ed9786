package glue

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/sinks/glue/gluetest"
	"github.com/floe-io/floe/sinks/internal/mirrortest"
	"github.com/floe-io/floe/sinks/sink"
)

func colsOf(tb gluetest.Table) [][2]string {
	var out [][2]string
	for _, c := range tb.Columns {
		out = append(out, [2]string{c.Name, c.Type})
	}
	return out
}

// TestDeltaSync: a table's Delta entry is created beside its Iceberg one as
// a native Delta table, follows schema growth, is left alone (no new Glue
// version) by commits that change nothing it holds, and never overwrites a
// table of its name that is not a Delta table.
func TestDeltaSync(t *testing.T) {
	fake := gluetest.New(t)
	s := newSyncer(t, fake)
	d := s.Delta()
	dir := t.TempDir()
	base := []iceberg.NestedField{
		{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true, Doc: "the id"},
		{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		{ID: 3, Name: "key", Type: iceberg.PrimitiveTypes.UUID},
		{ID: 4, Name: "geo", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "hash", Type: iceberg.FixedTypeOf(8)}, {ID: 6, Name: "n", Type: iceberg.PrimitiveTypes.Int32}}}},
	}
	m0 := mirrortest.WriteMetadata(t, dir, "00000", iceberg.NewSchema(0, base...))
	grown := append(slices.Clone(base), iceberg.NestedField{ID: 7, Name: "price", Type: iceberg.DecimalTypeOf(10, 2)})
	m1 := mirrortest.WriteMetadata(t, dir, "00001", iceberg.NewSchema(1, grown...))
	m2 := mirrortest.WriteMetadata(t, dir, "00002", iceberg.NewSchema(1, grown...))
	ctx := context.Background()
	st := sink.SyncTable{Key: "Sales\x1fOrders", Ident: []string{"Sales", "Orders"}, MetadataLocation: m0}

	if err := d.Sync(ctx, st); err != nil {
		t.Fatal(err)
	}
	tb, ok := fake.Table("floe_sales", "orders_delta")
	if !ok {
		t.Fatalf("delta entry not created; calls %v", fake.Calls())
	}
	if _, ok := fake.Table("floe_sales", "orders"); ok {
		t.Fatal("the delta syncer wrote the iceberg entry's name")
	}
	want := map[string]string{"table_type": "DELTA", "spark.sql.sources.provider": "delta", "classification": "delta", "EXTERNAL": "TRUE"}
	for k, v := range want {
		if tb.Parameters[k] != v {
			t.Errorf("parameter %s = %q, want %q", k, tb.Parameters[k], v)
		}
	}
	if tb.TableType != "EXTERNAL_TABLE" || tb.Location != "file://"+dir || tb.Parameters["metadata_location"] != "" {
		t.Fatalf("created %+v", tb)
	}
	// uuid and fixed are binary in Delta (the Iceberg entry says string and binary).
	wantCols := [][2]string{{"id", "bigint"}, {"ts", "timestamp"}, {"key", "binary"}, {"geo", "struct<hash:binary,n:int>"}}
	if got := colsOf(tb); !slices.Equal(got, wantCols) {
		t.Fatalf("columns %v, want %v", got, wantCols)
	}
	if tb.Columns[0].Comment != "the id" || len(tb.Columns[0].Parameters) != 0 {
		t.Fatalf("column %+v", tb.Columns[0])
	}

	// Schema growth: the entry gains the column in a new Glue version.
	st.MetadataLocation = m1
	if err := d.Sync(ctx, st); err != nil {
		t.Fatal(err)
	}
	tb, _ = fake.Table("floe_sales", "orders_delta")
	if got := colsOf(tb); tb.Version != 2 || !slices.Equal(got, append(wantCols, [2]string{"price", "decimal(10,2)"})) {
		t.Fatalf("after growth: version %d, columns %v", tb.Version, got)
	}
	// A commit that changes nothing the entry holds writes no Glue version.
	st.MetadataLocation = m2
	if err := d.Sync(ctx, st); err != nil {
		t.Fatal(err)
	}
	if tb, _ = fake.Table("floe_sales", "orders_delta"); tb.Version != 2 {
		t.Fatalf("an unchanged entry was rewritten: version %d", tb.Version)
	}
	// A hand edit is overwritten at the next sync.
	fake.Alter("floe_sales", "orders_delta", map[string]string{"owner": "someone"})
	if err := d.Sync(ctx, st); err != nil {
		t.Fatal(err)
	}
	if tb, _ = fake.Table("floe_sales", "orders_delta"); tb.Parameters["owner"] != "" {
		t.Fatalf("hand edit kept: %+v", tb.Parameters)
	}

	// The name held by a table that is not Delta: refused, not overwritten.
	fake.Alter("floe_sales", "orders_delta", map[string]string{"table_type": "ICEBERG"})
	if err := d.Sync(ctx, st); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("name taken: %v", err)
	}
	if tb, _ = fake.Table("floe_sales", "orders_delta"); tb.Parameters["table_type"] != "ICEBERG" {
		t.Fatalf("overwrote a non-delta table: %+v", tb.Parameters)
	}

	// A column Delta cannot hold: refused naming it.
	bad := mirrortest.WriteMetadata(t, t.TempDir(), "00000", iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "at", Type: iceberg.PrimitiveTypes.Time}))
	if err := d.Sync(ctx, sink.SyncTable{Key: "Sales\x1fT", Ident: []string{"Sales", "T"}, MetadataLocation: bad}); !errors.Is(err, ErrNoDeltaType) {
		t.Fatalf("time column: %v", err)
	}
	// Glue down: an error, nothing written.
	fake.SetDown(true)
	if err := d.Sync(ctx, sink.SyncTable{Key: "Sales\x1fX", Ident: []string{"Sales", "X"}, MetadataLocation: m0}); err == nil {
		t.Fatal("sync to a down glue succeeded")
	}
	fake.SetDown(false)
	if _, ok := fake.Table("floe_sales", "x_delta"); ok {
		t.Fatal("written while down")
	}
}
