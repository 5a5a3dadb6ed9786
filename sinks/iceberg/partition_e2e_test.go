package iceberg

import (
	"context"
	"reflect"
	"testing"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/google/uuid"
)

// TestPartitionValuesInManifest: a table partitioned by identity on a long,
// a decimal(38,10), a uuid, a time, a binary and a fixed commits a file
// whose partition is 2^60+1, a 38-digit decimal and so on through the ledger path (descriptor, Raft
// JSON, rebuild, commit), and the manifest iceberg-go reads back holds
// exactly those values. Before the binary form the long was 2^60 and the
// decimal failed to rebuild.
func TestPartitionValuesInManifest(t *testing.T) {
	ctx := context.Background()
	_, cat, _ := newSink(t)
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "amount", Type: iceberg.DecimalTypeOf(38, 10)},
		iceberg.NestedField{ID: 3, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 4, Name: "t", Type: iceberg.PrimitiveTypes.Time},
		iceberg.NestedField{ID: 5, Name: "b", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 6, Name: "f", Type: iceberg.FixedTypeOf(4)},
	)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "id", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "amount", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1002, Name: "u", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{4}, FieldID: 1003, Name: "t", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{5}, FieldID: 1004, Name: "b", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{6}, FieldID: 1005, Name: "f", Transform: iceberg.IdentityTransform{}},
	)
	if err := cat.CreateNamespace(ctx, []string{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, []string{"db", "p"}, sc, icecatalog.WithPartitionSpec(&spec))
	if err != nil {
		t.Fatal(err)
	}
	tspec := tbl.Spec()
	want := map[int]any{
		1000: int64(1<<60 + 1),
		1001: decimal3810(t).Any(),
		1002: uuid.MustParse("0b5c2a94-4a8c-4f43-9d6b-2f0f5e1b7c11"),
		1003: iceberg.Time(86399999999),
		1004: []byte{0, 0xff, 1},
		1005: []byte{0, 0xff, 1, 0x80},
	}
	b, err := iceberg.NewDataFileBuilder(tspec, iceberg.EntryContentData, tbl.Location()+"/data/f.parquet", iceberg.ParquetFile, want, nil, nil, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	df, err := rebuild(tbl.Metadata(), throughRaft(t, describe(b.Build())))
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.AddDataFiles(ctx, []iceberg.DataFile{df}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	tbl, err = cat.LoadTable(ctx, []string{"db", "p"})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil || len(mfs) != 1 {
		t.Fatalf("manifests %v %v", mfs, err)
	}
	entries, err := mfs[0].FetchEntries(fs, true)
	if err != nil || len(entries) != 1 {
		t.Fatalf("entries %v %v", entries, err)
	}
	got := entries[0].DataFile().Partition()
	for id, w := range want {
		g := got[id]
		if d, ok := g.(iceberg.DecimalLiteral); ok {
			g = iceberg.Decimal(d) // the manifest reader returns the literal type
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("manifest partition field %d = %#v (%T), want %#v (%T)", id, got[id], got[id], w, w)
		}
	}
}
