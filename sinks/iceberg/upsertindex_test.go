package iceberg

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestReadKeyIndexSize: the size of a closed index: its pages hold the
// keys (more keys, more pages), never more than the file, and the file is
// readable again afterwards (the read-only open released its lock).
func TestReadKeyIndexSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.db")
	var sizes []KeyIndexSize
	for round, n := range []int{1000, 20000} {
		x, err := OpenKeyIndex(path)
		if err != nil {
			t.Fatal(err)
		}
		changes := make([]keyChange, n)
		for i := range changes {
			changes[i] = keyChange{tp: "t/0", key: fmt.Appendf(nil, "key-%09d", i), ref: rowRef{path: "s3://bucket/data/file.parquet", pos: int64(i)}}
		}
		if err := x.apply("ns\x1ftbl", changes, int64(round+1)); err != nil {
			t.Fatal(err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		sz, err := ReadKeyIndexSize(path)
		if err != nil {
			t.Fatal(err)
		}
		// Each entry holds at least its key and value (40 + 14 bytes).
		if sz.InuseBytes < int64(n*54) || sz.InuseBytes > sz.PageBytes || sz.PageBytes > sz.FileBytes {
			t.Fatalf("%d keys: %+v", n, sz)
		}
		sizes = append(sizes, sz)
	}
	if sizes[1].PageBytes <= sizes[0].PageBytes {
		t.Fatalf("20,000 keys in no more pages than 1,000: %+v", sizes)
	}
}
