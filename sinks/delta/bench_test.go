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
