package delta

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/blob/s3blob"
)

// stores returns one of each Store over an empty root: local, an
// in-memory gocloud bucket and an S3 bucket (a fake S3 endpoint that
// honours If-None-Match: * as S3 does, and counts the conditional PUTs).
func stores(t *testing.T) map[string]Store {
	t.Helper()
	fake := newFakeS3()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	client := s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), UsePathStyle: true,
		Credentials:                credentials.NewStaticCredentialsProvider("k", "s", ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	bucket, err := s3blob.OpenBucket(context.Background(), client, "wh", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bucket.Close() })
	mem := memblob.OpenBucket(nil)
	t.Cleanup(func() { mem.Close() })
	return map[string]Store{
		"local": LocalStore(t.TempDir()),
		"mem":   BlobStore(mem, "ns/t"),
		"s3":    BlobStore(bucket, "ns/t"),
	}
}

// TestPutIfAbsentRace: writers race for one version; exactly one wins, the
// others get ErrVersionExists, and the file holds the winner's bytes.
func TestPutIfAbsentRace(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			const writers = 8
			errs := make([]error, writers)
			var wg sync.WaitGroup
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = st.PutIfAbsent(ctx, commitName(0), []byte{byte('a' + i)})
				}()
			}
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner < 0:
					winner = i
				case err == nil:
					t.Fatalf("writers %d and %d both won", winner, i)
				case !errors.Is(err, ErrVersionExists):
					t.Fatalf("writer %d: %v", i, err)
				}
			}
			if winner < 0 {
				t.Fatal("nobody won")
			}
			b, err := st.Get(ctx, commitName(0), 10)
			if err != nil || string(b) != string(rune('a'+winner)) {
				t.Fatalf("file holds %q, %v; want writer %d's", b, err, winner)
			}
		})
	}
}

// TestStoreBasics: Get of a missing file, limits, Put replacing, List in
// order after a start, Delete.
func TestStoreBasics(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if _, err := st.Get(ctx, lastCheckpointName, 10); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("missing: %v", err)
			}
			for _, v := range []int64{2, 0, 1} {
				if err := st.PutIfAbsent(ctx, commitName(v), []byte("{}")); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.Put(ctx, lastCheckpointName, []byte("1")); err != nil {
				t.Fatal(err)
			}
			if err := st.Put(ctx, lastCheckpointName, []byte("22")); err != nil {
				t.Fatal(err)
			}
			if b, err := st.Get(ctx, lastCheckpointName, 2); err != nil || string(b) != "22" {
				t.Fatalf("replaced: %q %v", b, err)
			}
			if _, err := st.Get(ctx, lastCheckpointName, 1); !errors.Is(err, ErrCorruptLog) {
				t.Fatalf("over the limit: %v", err)
			}
			got, err := st.List(ctx, logDir, "00000000000000000000.json")
			want := []string{"00000000000000000001.json", "00000000000000000002.json", "_last_checkpoint"}
			if err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("list %v %v, want %v", got, err, want)
			}
			if err := st.Delete(ctx, commitName(2)); err != nil {
				t.Fatal(err)
			}
			if err := st.Delete(ctx, commitName(2)); err != nil {
				t.Fatalf("deleting a missing file: %v", err)
			}
		})
	}
}

// TestLogOnStores runs a log with a checkpoint on every store.
func TestLogOnStores(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			loc := "s3://wh/ns/t"
			if ls, ok := st.(LocalStore); ok {
				loc = "file://" + string(ls)
			}
			tbl := testTable(loc, 1)
			publishN(t, openLog(t, st), tbl, 1, 12)
			r := openLog(t, st)
			if txn, _ := r.Txn(tableID); r.Version() != 11 || txn != 12 || len(r.Files()) != 12 {
				t.Fatalf("version %d txn %d files %d", r.Version(), txn, len(r.Files()))
			}
		})
	}
}

// fakeS3 is the part of S3 a Delta log uses: PUT (with If-None-Match: *),
// GET, DELETE and ListObjectsV2 with prefix and start-after.
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
}

func newFakeS3() *fakeS3 { return &fakeS3{objects: map[string][]byte{}} }

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/wh/")
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodPut:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if _, exists := f.objects[key]; exists && r.Header.Get("If-None-Match") == "*" {
			w.WriteHeader(http.StatusPreconditionFailed)
			io.WriteString(w, `<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>`)
			return
		}
		f.objects[key] = body
		w.Header().Set("ETag", `"x"`)
	case r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2":
		f.list(w, r)
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		b, ok := f.objects[key]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `<Error><Code>NoSuchKey</Code></Error>`)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Header().Set("Last-Modified", time.Unix(0, 0).UTC().Format(http.TimeFormat))
		if r.Method == http.MethodGet {
			w.Write(b)
		}
	case r.Method == http.MethodDelete:
		delete(f.objects, key)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "unsupported", http.StatusNotImplemented)
	}
}

func (f *fakeS3) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	type content struct {
		Key          string `xml:"Key"`
		Size         int    `xml:"Size"`
		LastModified string `xml:"LastModified"`
		ETag         string `xml:"ETag"`
	}
	out := struct {
		XMLName     xml.Name  `xml:"ListBucketResult"`
		Name        string    `xml:"Name"`
		Prefix      string    `xml:"Prefix"`
		KeyCount    int       `xml:"KeyCount"`
		IsTruncated bool      `xml:"IsTruncated"`
		Contents    []content `xml:"Contents"`
	}{Name: "wh", Prefix: q.Get("prefix")}
	var keys []string
	for k := range f.objects {
		if strings.HasPrefix(k, q.Get("prefix")) && k > q.Get("start-after") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.Contents = append(out.Contents, content{Key: k, Size: len(f.objects[k]), LastModified: "2026-01-01T00:00:00.000Z", ETag: `"x"`})
	}
	out.KeyCount = len(out.Contents)
	w.Header().Set("Content-Type", "application/xml")
	xml.NewEncoder(w).Encode(out)
}
