package upsert

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// TestReadKeyIndexSize: the size of a closed index: its pages hold the
// keys (more keys, more pages), never more than the file, and the file is
// readable again afterwards (the read-only open released its lock).
func TestReadKeyIndexSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.db")
	var sizes []IndexSize
	for round, n := range []int{1000, 20000} {
		x, err := OpenIndex(path)
		if err != nil {
			t.Fatal(err)
		}
		changes := make([]change, n)
		for i := range changes {
			changes[i] = change{tp: "t/0", key: fmt.Appendf(nil, "key-%09d", i), ref: rowRef{path: "s3://bucket/data/file.parquet", pos: int64(i)}}
		}
		if err := x.apply("ns\x1ftbl", changes, int64(round+1)); err != nil {
			t.Fatal(err)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		sz, err := ReadIndexSize(path)
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

// TestSortChanges: changes come out by partition, then stored key (a long
// key by its hash), changes of one key in their order, each with its
// stored key; each stored key is made once, not per comparison.
func TestSortChanges(t *testing.T) {
	long := bytes.Repeat([]byte("z"), maxPlainKey+1)
	mk := func() []change {
		return []change{
			{tp: "t/1", key: []byte("a"), ref: rowRef{pos: 0}},
			{tp: "t/0", key: long, ref: rowRef{pos: 1}},
			{tp: "t/0", key: []byte("b"), ref: rowRef{pos: 2}},
			{tp: "t/0", key: []byte("b"), ref: rowRef{pos: 3}, gone: true},
			{tp: "t/0", key: []byte("a"), ref: rowRef{pos: 4}},
			{tp: "t/0", key: []byte("b"), ref: rowRef{pos: 5}},
		}
	}
	changes := mk()
	keys := sortChanges(changes)
	var got []int64
	for i, c := range changes {
		got = append(got, c.ref.pos)
		if !bytes.Equal(keys[i], indexKey(c.key)) {
			t.Fatalf("change %d (%+v) came with stored key %q", i, c, keys[i])
		}
	}
	if want := []int64{4, 2, 3, 5, 1, 0}; !slices.Equal(got, want) {
		t.Fatalf("order by position %v, want %v", got, want)
	}

	many := make([]change, 1000)
	for i := range many {
		many[i] = change{tp: "t/0", key: fmt.Appendf(nil, "key-%04d", (i*7919)%1000)}
	}
	// The stored keys and three slices: made in the comparison, the
	// allocations grow with n log n (about 20,000 here).
	allocs := testing.AllocsPerRun(5, func() { sortChanges(slices.Clone(many)) })
	if allocs > float64(len(many))+10 {
		t.Fatalf("%.0f allocations to sort %d changes: stored keys made per comparison", allocs, len(many))
	}
}

// BenchmarkSortChanges: sorting a commit of 100,000 changes (`floe bench
// --upsert-passes` found the stored keys made per comparison to be half
// of the index updates' CPU).
func BenchmarkSortChanges(b *testing.B) {
	changes := make([]change, 100_000)
	for i := range changes {
		changes[i] = change{tp: fmt.Sprintf("t/%d", i%8), key: fmt.Appendf(nil, "key-%09d", (i*7919)%100_000)}
	}
	b.ReportAllocs()
	for b.Loop() {
		sortChanges(slices.Clone(changes))
	}
}
