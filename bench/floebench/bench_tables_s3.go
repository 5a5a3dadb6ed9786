package floebench

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// countingS3 is the tables bench's warehouse: an in-process S3 (gofakes3)
// that counts, outside Floe, every request it answers and the bytes of
// every object put, by kind of object. Floe's own counters
// (metadata_bytes_written, object_requests) are its view; this is the
// store's, which a bill would follow.
type countingS3 struct {
	srv *httptest.Server

	mu     sync.Mutex
	counts map[string]*objectCounts // kind -> counts
}

// objectCounts are one kind's requests and the bytes put.
type objectCounts struct {
	Put, Get, List, Delete int64
	PutBytes               int64
}

// Object kinds, from the key: Iceberg's metadata files, its data files,
// the Delta log, and the rest (checkpoints, markers).
const (
	kindMetadataJSON = "metadata.json"
	kindManifestList = "manifest list"
	kindManifest     = "manifest"
	kindData         = "data"
	kindDelta        = "delta log"
	kindOther        = "other"
)

var objectKinds = []string{kindMetadataJSON, kindManifestList, kindManifest, kindData, kindDelta, kindOther}

func startCountingS3(bucket string) (*countingS3, error) {
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		return nil, err
	}
	fake := gofakes3.New(backend).Server()
	c := &countingS3{counts: map[string]*objectCounts{}}
	for _, k := range objectKinds {
		c.counts[k] = &objectCounts{}
	}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.count(r)
		fake.ServeHTTP(w, r)
	}))
	return c, nil
}

func (c *countingS3) URL() string { return c.srv.URL }

func (c *countingS3) Close() { c.srv.Close() }

// count classifies one request as S3 bills it: a GET without a key (or
// with list-type) lists, DELETE and the batch delete (POST ?delete)
// delete, other PUTs and POSTs put (multipart steps each count), GET and
// HEAD get.
func (c *countingS3) count(r *http.Request) {
	key := r.URL.Path
	if i := strings.IndexByte(strings.TrimPrefix(key, "/"), '/'); i >= 0 {
		key = strings.TrimPrefix(key, "/")[i+1:]
	} else {
		key = ""
	}
	q := r.URL.Query()
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.counts[objectKind(key)]
	switch {
	case r.Method == http.MethodGet && (key == "" || q.Has("list-type")):
		n.List++
	case r.Method == http.MethodDelete || (r.Method == http.MethodPost && q.Has("delete")):
		n.Delete++
	case r.Method == http.MethodPut || r.Method == http.MethodPost:
		n.Put++
		if r.ContentLength > 0 {
			n.PutBytes += r.ContentLength
		}
	default:
		n.Get++
	}
}

func objectKind(key string) string {
	base := key[strings.LastIndexByte(key, '/')+1:]
	switch {
	case strings.Contains(key, "/_delta_log/"):
		return kindDelta
	case strings.HasSuffix(base, ".metadata.json"):
		return kindMetadataJSON
	case strings.Contains(key, "/metadata/") && strings.HasPrefix(base, "snap-") && strings.HasSuffix(base, ".avro"):
		return kindManifestList
	case strings.Contains(key, "/metadata/") && strings.HasSuffix(base, ".avro"):
		return kindManifest
	case strings.HasSuffix(base, ".parquet"):
		return kindData
	}
	return kindOther
}

// snapshot copies the counts.
func (c *countingS3) snapshot() map[string]objectCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]objectCounts, len(c.counts))
	for k, v := range c.counts {
		out[k] = *v
	}
	return out
}
