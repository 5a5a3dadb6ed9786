package objstore

import (
	"context"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// TestCountsPerTable: requests through an s3:// FileIO are counted by
// class and attributed to the table whose location holds the object, as an
// in-process S3 server sees them.
var countsRuns atomic.Int32

// fakeS3 starts an in-process S3 with a bucket "lake", installs the
// counting FileIO and returns the IO properties that reach the store.
func fakeS3(t *testing.T) map[string]string {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("lake"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	Install()
	return map[string]string{
		icebergio.S3EndpointURL: srv.URL, icebergio.S3Region: "us-east-1",
		icebergio.S3AccessKeyID: "k", icebergio.S3SecretAccessKey: "s",
	}
}

func TestCountsPerTable(t *testing.T) {
	props := fakeS3(t)
	ctx := context.Background()
	// The counters are process-wide, so each run (go test -count=N) uses
	// tables of its own.
	ns := fmt.Sprintf("s3://lake/wh/run%d", countsRuns.Add(1))
	table, other := ns+"/orders", ns+"/other"
	before := Total()
	fsys, err := icebergio.LoadFS(ctx, props, table)
	if err != nil {
		t.Fatal(err)
	}
	wfs := fsys.(icebergio.WriteFileIO)
	for _, p := range []string{table + "/data/a.parquet", table + "/data/b.parquet", table + "/metadata/00001.metadata.json"} {
		if err := wfs.WriteFile(p, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := wfs.WriteFile(other+"/data/c.parquet", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.(icebergio.ReadFileIO).ReadFile(table + "/metadata/00001.metadata.json"); err != nil {
		t.Fatal(err)
	}
	walked := 0
	if err := fsys.(icebergio.ListableIO).WalkDir(table, func(string, fs.DirEntry, error) error { walked++; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Remove(table + "/data/a.parquet"); err != nil {
		t.Fatal(err)
	}
	got := For(table)
	if got.Put != 3 || got.Get < 1 || got.List < 1 || got.Delete < 1 || walked == 0 {
		t.Fatalf("counts for %s: %+v (walked %d)", table, got, walked)
	}
	if o := For(other); o.Put != 1 || o.Get != 0 {
		t.Fatalf("counts for the other table: %+v", o)
	}
	if tot := Total(); tot.Put-before.Put < 4 {
		t.Fatalf("total %+v, before this run %+v", tot, before)
	}
	if For("file:///tmp/x").Put != 0 {
		t.Fatal("file:// counted")
	}
}

func TestTableRoot(t *testing.T) {
	for key, want := range map[string]string{
		"wh/ns/t/data/part=1/f.parquet": "wh/ns/t",
		"wh/ns/t/metadata/00001.json":   "wh/ns/t",
		"wh/ns/t/data":                  "wh/ns/t",
		"wh/_floe/state/latest.json":    "wh/_floe/state",
		"/wh/ns/t/metadata/snap-1.avro": "wh/ns/t",
		"x":                             "",
		"wh/ns/data/data/f.parquet":     "wh/ns/data",
		"wh/ns/data/metadata/v1.json":   "wh/ns/data",
		"wh/metadata/t/data/f.parquet":  "wh/metadata/t",
		"data/ns/t/metadata/v1.json":    "data/ns/t",
	} {
		if got := tableRoot(key); got != want {
			t.Errorf("tableRoot(%q) = %q, want %q", key, got, want)
		}
	}
}
