package glue

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/sinks/glue/gluetest"
	"github.com/floe-io/floe/sinks/internal/mirrortest"
	"github.com/floe-io/floe/sinks/sink"
)

// TestDrop: a table turned [delta] loses its Iceberg entry and keeps its
// Delta one, also at a second drop (the conformance suite checks the rest
// of dropping).
func TestDrop(t *testing.T) {
	fake := gluetest.New(t)
	s := newSyncer(t, fake)
	dir := t.TempDir()
	m0 := mirrortest.WriteMetadata(t, dir, "00000", iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64}))
	ctx := context.Background()
	st := sink.SyncTable{Key: "Sales\x1fOrders", Ident: []string{"Sales", "Orders"}, MetadataLocation: m0}
	if err := s.Sync(ctx, st); err != nil {
		t.Fatal(err)
	}
	if err := s.Delta().Sync(ctx, st); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Drop(ctx, st); err != nil {
			t.Fatal(err)
		}
		if _, ok := fake.Table("floe_sales", "orders"); ok {
			t.Fatalf("the iceberg entry is still there; calls %v", fake.Calls())
		}
		if _, ok := fake.Table("floe_sales", "orders_delta"); !ok {
			t.Fatal("the delta entry went too")
		}
	}
}
