package objstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
)

// TestSmallObjectsReadWhole: an object up to wholeReadMax is read with one
// GET however many ranged reads follow (the Parquet reader's length,
// footer and column chunks), and every read returns the object's bytes; a
// larger object keeps its ranged GETs. The S3 FileIO keeps its other
// capabilities (it still writes, lists and reads whole files).
func TestSmallObjectsReadWhole(t *testing.T) {
	props := fakeS3(t)
	table := fmt.Sprintf("s3://lake/wh/small%d/t", countsRuns.Add(1))
	fsys, err := icebergio.LoadFS(context.Background(), props, table)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fsys.(icebergio.ListableIO); !ok {
		t.Fatal("the S3 FileIO lost listing")
	}
	for _, c := range []struct {
		name  string
		size  int
		whole bool
	}{
		{"a quiet table's data file", 10 << 10, true},
		{"at the bound", wholeReadMax, true},
		{"above it", wholeReadMax + 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := make([]byte, c.size)
			for i := range data {
				data[i] = byte(i * 7)
			}
			path := fmt.Sprintf("%s/data/%d.parquet", table, c.size)
			if err := fsys.(icebergio.WriteFileIO).WriteFile(path, data); err != nil {
				t.Fatal(err)
			}
			before := For(table).Get
			f, err := fsys.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, err := f.Stat()
			if err != nil || st.Size() != int64(c.size) {
				t.Fatalf("stat: %v, size %d", err, st.Size())
			}
			// As the Parquet reader does: the tail, then chunks.
			for _, r := range [][2]int{{c.size - 8, 8}, {c.size - 200, 192}, {0, 4}, {100, 1000}, {c.size / 2, 500}} {
				buf := make([]byte, r[1])
				if _, err := f.ReadAt(buf, int64(r[0])); err != nil {
					t.Fatalf("ReadAt(%d, %d): %v", r[0], r[1], err)
				}
				if !bytes.Equal(buf, data[r[0]:r[0]+r[1]]) {
					t.Fatalf("ReadAt(%d, %d) returned other bytes", r[0], r[1])
				}
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			all, err := io.ReadAll(f)
			if err != nil || !bytes.Equal(all, data) {
				t.Fatalf("read back %d bytes, %v", len(all), err)
			}
			gets := For(table).Get - before
			if c.whole && gets != 1 {
				t.Fatalf("%d GETs for a %d-byte object, want 1", gets, c.size)
			}
			if !c.whole && gets < 3 {
				t.Fatalf("%d GETs for a %d-byte object, want its ranged reads", gets, c.size)
			}
		})
	}
}
