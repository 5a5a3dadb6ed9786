package delta

import (
	"context"
	"testing"
)

// BenchmarkPublish is the cost of one appended Delta version (one data
// file, put-if-absent on the local file system, a checkpoint every 10).
func BenchmarkPublish(b *testing.B) {
	t := &testing.T{}
	dir := b.TempDir()
	tbl := testTable("file://"+dir, 1)
	l, err := Open(context.Background(), LocalStore(dir), Options{})
	if err != nil {
		b.Fatal(err)
	}
	files := make([]File, b.N)
	for i := range files {
		files[i] = dataFile(t, tbl.Location, 1, "eu", int64(i), int64(i))
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := l.Publish(context.Background(), appendCommit(tbl, int64(i+1), files[i])); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckpoint encodes the checkpoint of a table of 10,000 live
// files.
func BenchmarkCheckpoint(b *testing.B) {
	t := &testing.T{}
	tbl := testTable("file:///wh/t", 1)
	l := &Log{opts: Options{CheckpointInterval: 10, EngineInfo: "floe"}, snap: newSnapshot()}
	var files []File
	for i := range 10000 {
		files = append(files, dataFile(t, tbl.Location, 1, "eu", int64(i), int64(i)))
	}
	acts, err := l.actions(appendCommit(tbl, 1, files...), 0)
	if err != nil {
		b.Fatal(err)
	}
	l.snap.apply(0, acts)
	b.ResetTimer()
	for range b.N {
		if _, _, _, err := encodeCheckpoint(l.snap, fixedClock()()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPublishDeletes is the cost of one upsert version (a new data
// file, and rows deleted from it and from an older file whose DV grows),
// DVs in a file per version (the default) or inline.
func BenchmarkPublishDeletes(b *testing.B) {
	for _, inline := range []bool{false, true} {
		name := "file"
		if inline {
			name = "inline"
		}
		b.Run(name, func(b *testing.B) {
			t := &testing.T{}
			dir := b.TempDir()
			tbl := testTable("file://"+dir, 1)
			tbl.DeletionVectors = true
			l, err := Open(context.Background(), LocalStore(dir), Options{InlineDVs: inline})
			if err != nil {
				b.Fatal(err)
			}
			old := dataFile(t, tbl.Location, 1, "eu", 0, 1<<20)
			if _, err := l.Publish(context.Background(), appendCommit(tbl, 1, old)); err != nil {
				b.Fatal(err)
			}
			files := make([]File, b.N)
			for i := range files {
				files[i] = dataFile(t, tbl.Location, 1, "eu", int64(i), int64(i)+100)
			}
			b.ResetTimer()
			for i := range b.N {
				c := appendCommit(tbl, int64(i+2), files[i])
				c.Deletes = map[string][]int64{old.Path: {int64(i) * 7}, files[i].Path: {3}}
				if _, err := l.Publish(context.Background(), c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
