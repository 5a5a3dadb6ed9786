package objstore

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// recordingS3 is an in-process S3 (gofakes3) that records the
// x-amz-storage-class header of every request that starts an object: a
// PUT without a part number, or the POST that creates a multipart upload.
// It refuses (403) every request for a key under a refused/ directory.
type recordingS3 struct {
	mu      sync.Mutex
	classes map[string][]string // path -> the header of each upload, "" when absent
	srv     *httptest.Server
}

func newRecordingS3(t *testing.T, bucket string) *recordingS3 {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	r := &recordingS3{classes: map[string][]string{}}
	fake := gofakes3.New(backend).Server()
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		starts := (req.Method == http.MethodPut && !q.Has("partNumber")) || (req.Method == http.MethodPost && q.Has("uploads"))
		if starts {
			r.mu.Lock()
			r.classes[req.URL.Path] = append(r.classes[req.URL.Path], req.Header.Get("X-Amz-Storage-Class"))
			r.mu.Unlock()
		}
		if strings.Contains(req.URL.Path, "/refused/") {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>refused</Message></Error>`))
			return
		}
		fake.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// class returns the header the one upload of path carried.
func (r *recordingS3) class(t *testing.T, path string) string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.classes[path]
	if len(got) != 1 {
		t.Fatalf("%s uploaded %d times (%q), want once", path, len(got), got)
	}
	return got[0]
}

func (r *recordingS3) props() map[string]string {
	return map[string]string{
		icebergio.S3EndpointURL: r.srv.URL, icebergio.S3Region: "us-east-1",
		icebergio.S3AccessKeyID: "k", icebergio.S3SecretAccessKey: "s",
	}
}

// TestStorageClassOnDataFilesOnly: uploads under a table's data/ carry the
// class its ClassFunc gives (PutObject for small files, the
// CreateMultipartUpload of a file past the transfer manager's 16 MiB
// threshold); its metadata files carry none, nor do the data files of a
// table without a class. A changed class applies to the next file.
func TestStorageClassOnDataFilesOnly(t *testing.T) {
	s3 := newRecordingS3(t, "classes")
	Install()
	var (
		mu    sync.Mutex
		class = map[string]string{"s3://classes/wh/ns/cold": "STANDARD_IA"}
	)
	t.Cleanup(AddStorageClasses(func(loc string) string {
		mu.Lock()
		defer mu.Unlock()
		return class[loc]
	}))
	// Another node's resolver answers only for its own tables.
	t.Cleanup(AddStorageClasses(func(loc string) string {
		if loc == "s3://classes/wh/ns/theirs" {
			return "ONEZONE_IA"
		}
		return ""
	}))
	fsys, err := icebergio.LoadFS(context.Background(), s3.props(), "s3://classes/wh")
	if err != nil {
		t.Fatal(err)
	}
	wfs := fsys.(icebergio.WriteFileIO)
	write := func(path string, size int) {
		t.Helper()
		if err := wfs.WriteFile("s3://classes/"+path, bytes.Repeat([]byte("x"), size)); err != nil {
			t.Fatalf("writing %s: %v", path, err)
		}
	}
	write("wh/ns/cold/data/a.parquet", 100)
	write("wh/ns/cold/data/day=2026-01-01/b.parquet", 100)
	write("wh/ns/cold/data/big.parquet", 17<<20) // multipart
	write("wh/ns/cold/metadata/00001-x.metadata.json", 100)
	write("wh/ns/cold/metadata/snap-1-x.avro", 100)
	write("wh/ns/hot/data/c.parquet", 100)
	write("wh/ns/hot/metadata/00001-y.metadata.json", 100)
	write("wh/ns/theirs/data/t.parquet", 100)
	mu.Lock()
	class["s3://classes/wh/ns/cold"], class["s3://classes/wh/ns/hot"] = "", "INTELLIGENT_TIERING"
	mu.Unlock()
	write("wh/ns/cold/data/d.parquet", 100)
	write("wh/ns/hot/data/e.parquet", 100)

	for path, want := range map[string]string{
		"wh/ns/cold/data/a.parquet":                 "STANDARD_IA",
		"wh/ns/cold/data/day=2026-01-01/b.parquet":  "STANDARD_IA",
		"wh/ns/cold/data/big.parquet":               "STANDARD_IA",
		"wh/ns/cold/metadata/00001-x.metadata.json": "",
		"wh/ns/cold/metadata/snap-1-x.avro":         "",
		"wh/ns/hot/data/c.parquet":                  "",
		"wh/ns/hot/metadata/00001-y.metadata.json":  "",
		"wh/ns/cold/data/d.parquet":                 "",
		"wh/ns/hot/data/e.parquet":                  "INTELLIGENT_TIERING",
	} {
		if got := s3.class(t, "/classes/"+path); got != want {
			t.Errorf("%s: x-amz-storage-class %q, want %q", path, got, want)
		}
	}
}

// TestMetadataBytes: the bodies uploaded under a table's metadata/ add up
// to the sizes of its metadata objects, whether written whole or streamed
// (as manifests are) and past the multipart threshold; data files and other
// tables do not count, nor does a refused upload.
func TestMetadataBytes(t *testing.T) {
	s3 := newRecordingS3(t, "meta")
	Install()
	// Counts are per process: a warehouse of its own per run (-count).
	wh := fmt.Sprintf("s3://meta/wh%d", time.Now().UnixNano())
	table := wh + "/ns/orders"
	fsys, err := icebergio.LoadFS(context.Background(), s3.props(), table)
	if err != nil {
		t.Fatal(err)
	}
	wfs := fsys.(icebergio.WriteFileIO)
	sizes := []int{1, 4096, 17 << 20}
	var want int64
	for i, n := range sizes {
		if err := wfs.WriteFile(table+"/metadata/0000"+string(rune('0'+i))+"-a.metadata.json", bytes.Repeat([]byte("m"), n)); err != nil {
			t.Fatal(err)
		}
		want += int64(n)
	}
	w, err := wfs.Create(table + "/metadata/snap-1-a.avro")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := w.Write([]byte(strings.Repeat("s", 1000))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want += 3000
	if err := wfs.WriteFile(table+"/data/f.parquet", make([]byte, 500)); err != nil {
		t.Fatal(err)
	}
	if err := wfs.WriteFile(wh+"/ns/other/metadata/00000-b.metadata.json", make([]byte, 70)); err != nil {
		t.Fatal(err)
	}
	if err := wfs.WriteFile(wh+"/refused/t/metadata/00000-c.metadata.json", make([]byte, 70)); err == nil {
		t.Fatal("a refused upload succeeded")
	}
	if got := For(table).MetadataBytes; got != want {
		t.Fatalf("metadata bytes %d, want %d", got, want)
	}
	if got := For(wh + "/ns/other").MetadataBytes; got != 70 {
		t.Fatalf("the other table's metadata bytes %d, want 70", got)
	}
	if got := For(wh + "/refused/t"); got.MetadataBytes != 0 || got.Put == 0 {
		t.Fatalf("a refused upload: %+v, want its request counted and no bytes", got)
	}
}
