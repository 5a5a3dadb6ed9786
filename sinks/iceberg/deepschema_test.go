package iceberg

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/records"
)

// nestedShape is a payload whose one column nests depth containers deep:
// lists of lists (what iceberg-go's ListType.MarshalJSON spent a record's
// 7 minutes on) or structs of structs.
func nestedShape(depth int, kind records.Kind) *records.Shape {
	s := &records.Shape{Kind: records.Long}
	for range depth - 1 {
		if kind == records.List {
			s = &records.Shape{Kind: records.List, Elem: s}
		} else {
			s = &records.Shape{Kind: records.Struct, Fields: []*records.Field{{Name: "f", Shape: s}}}
		}
	}
	return &records.Shape{Kind: records.Struct, Fields: []*records.Field{{Name: "c", Shape: s}}}
}

// metadataCost builds a table's schema and metadata for shape and marshals
// it, as creating or committing the table does; it returns the time and
// the bytes allocated.
func metadataCost(t *testing.T, shape *records.Shape) (time.Duration, uint64, int) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	sc, err := tableSchema("json", shape)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///w/db/t", nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	return took, after.TotalAlloc - before.TotalAlloc, len(out)
}

// TestDeepSchemaMetadataCost: iceberg-go marshals nested types
// superlinearly (every level re-encodes what its children produced), so
// the nesting caps must keep a table's metadata cheap: at the default
// depth (64) and the highest a table may set (256), building and
// marshaling it stays far below a commit interval and a memory budget.
// The figures are logged (go test -v -run TestDeepSchemaMetadataCost).
func TestDeepSchemaMetadataCost(t *testing.T) {
	cases := []struct {
		depth    int
		kind     records.Kind
		maxAlloc uint64
	}{
		{records.DefaultMaxNestingDepth, records.List, 16 << 20},
		{records.DefaultMaxNestingDepth, records.Struct, 16 << 20},
		{records.MaxNestingDepthCap, records.List, 128 << 20},
		{records.MaxNestingDepthCap, records.Struct, 128 << 20},
	}
	for _, c := range cases {
		took, alloc, size := metadataCost(t, nestedShape(c.depth, c.kind))
		t.Logf("depth %d of %s: %v, %d KiB allocated, metadata %d bytes", c.depth, c.kind, took, alloc>>10, size)
		if alloc > c.maxAlloc {
			t.Errorf("depth %d of %s allocated %d bytes, more than %d", c.depth, c.kind, alloc, c.maxAlloc)
		}
	}
}
