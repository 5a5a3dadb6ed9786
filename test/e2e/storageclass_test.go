package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/grpc/codes"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// upload is one object upload an S3 server saw: its path and the
// x-amz-storage-class header it carried ("" when absent).
type upload struct{ path, class string }

// recordingS3 is an in-process S3 (gofakes3) warehouse that records every
// request that starts an object (a PUT without a part number, the POST that
// creates a multipart upload), in order.
type recordingS3 struct {
	backend *s3mem.Backend
	srv     *httptest.Server
	mu      sync.Mutex
	uploads []upload
}

func newRecordingS3(t *testing.T, bucket string) *recordingS3 {
	t.Helper()
	r := &recordingS3{backend: s3mem.New()}
	if err := r.backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	fake := gofakes3.New(r.backend).Server()
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		if (req.Method == http.MethodPut && !q.Has("partNumber")) || (req.Method == http.MethodPost && q.Has("uploads")) {
			r.mu.Lock()
			r.uploads = append(r.uploads, upload{req.URL.Path, req.Header.Get("X-Amz-Storage-Class")})
			r.mu.Unlock()
		}
		fake.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// under returns the uploads of paths starting with prefix, in order, and
// how many uploads there were in all.
func (r *recordingS3) under(prefix string) ([]upload, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []upload
	for _, u := range r.uploads {
		if strings.HasPrefix(u.path, prefix) {
			out = append(out, u)
		}
	}
	return out, len(r.uploads)
}

// sizes sums the sizes of the objects under prefix in the store.
func (r *recordingS3) sizes(t *testing.T, bucket, prefix string) (total int64, objects int) {
	t.Helper()
	p := gofakes3.NewPrefix(&prefix, nil)
	list, err := r.backend.ListBucket(bucket, &p, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Contents {
		total += c.Size
	}
	return total, len(list.Contents)
}

// TestStorageClassAndMetadataBytesOnS3: on an s3:// warehouse, the data
// files of a table whose mapping sets storage_class carry it and its
// metadata files do not; a table without one sends no header until an
// update through the admin API sets one, which its next data files carry
// without a restart. Each table's metadata_bytes_written equals the sizes
// of the objects under its metadata/ (expiry and orphan cleanup delete
// nothing at their defaults in a test this short).
func TestStorageClassAndMetadataBytesOnS3(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	s3 := newRecordingS3(t, "lake")
	// objstore counts per process: a warehouse of its own keeps a second
	// run of the test (-count) from adding to this one's counters.
	wh := fmt.Sprintf("wh%d", time.Now().UnixNano())
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "cold", "plain")})
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "cold", Namespace: "sc", StorageClass: "REDUCED_REDUNDANCY"}})
	cfg.Warehouse = config.Warehouse{Location: "s3://lake/" + wh, S3: config.S3{Endpoint: s3.srv.URL, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s"}}
	cfg.CommitInterval = config.Duration(300 * time.Millisecond)
	cfg.Auth.Tokens = apiAdminToken + ":admin," + apiReadToken + ":read"
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop() })
	tr := transportTo(t, n, "grpc")
	plain := &adminv1.Mapping{Name: "plain", Topic: "plain", Namespace: "sc"}
	var write adminv1.WriteResponse
	if code, msg := tr.call(apiOp{"/floe.admin.v1.TableService/CreateMapping", "POST", "/v1/mappings", true}, apiAdminToken,
		&adminv1.CreateMappingRequest{Mapping: plain}, &write); code != codes.OK {
		t.Fatalf("creating the plain mapping: %s %s", code, msg)
	}
	produced := map[string]int64{}
	produce := func(rounds int) {
		for i := range rounds {
			for _, topic := range []string{"cold", "plain"} {
				var recs []*kgo.Record
				for p := range 2 {
					recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte(fmt.Sprintf(`{"i":%d,"p":%d}`, i, p))})
				}
				if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
					t.Fatal(err)
				}
				produced[topic] += int64(len(recs))
			}
			for _, tbl := range []string{"sc.cold", "sc.plain"} {
				testnode.WaitRows(t, n, tbl, produced[strings.TrimPrefix(tbl, "sc.")], time.Minute)
			}
		}
	}
	produce(3)

	checkClasses(t, s3, "/lake/"+wh+"/sc/cold/data/", "REDUCED_REDUNDANCY")
	checkClasses(t, s3, "/lake/"+wh+"/sc/cold/metadata/", "")
	checkClasses(t, s3, "/lake/"+wh+"/sc/plain/", "")

	// The update takes effect for new files; no restart.
	plain.StorageClass = "INTELLIGENT_TIERING"
	if code, msg := tr.call(apiOp{"/floe.admin.v1.TableService/UpdateMapping", "PUT", "/v1/mappings/plain", true}, apiAdminToken,
		&adminv1.UpdateMappingRequest{Name: "plain", Mapping: plain}, &write); code != codes.OK {
		t.Fatalf("updating the plain mapping: %s %s", code, msg)
	}
	_, before := s3.under("/lake/" + wh + "/sc/plain/data/")
	produce(2)
	data, _ := s3.under("/lake/" + wh + "/sc/plain/data/")
	if last := data[len(data)-1]; last.class != "INTELLIGENT_TIERING" {
		t.Fatalf("after the update, %s carried %q (uploads before the update: %d)", last.path, last.class, before)
	}
	checkClasses(t, s3, "/lake/"+wh+"/sc/plain/metadata/", "")

	for _, tbl := range []string{"cold", "plain"} {
		wait.Until(t, 30*time.Second, tbl+" metadata bytes equal to its metadata objects", func() error {
			rep, err := n.Report(context.Background())
			if err != nil {
				return err
			}
			tr, _ := tableReport(rep, "sc."+tbl)
			stored, objects := s3.sizes(t, "lake", wh+"/sc/"+tbl+"/metadata/")
			if tr.MetadataBytesWritten != stored || stored == 0 {
				return fmt.Errorf("metadata_bytes_written %d, %d objects under metadata/ hold %d bytes", tr.MetadataBytesWritten, objects, stored)
			}
			t.Logf("%s: %d metadata bytes in %d objects, %d commits", tbl, stored, objects, tr.Commits)
			return nil
		})
	}
}

// checkClasses: every upload under prefix carried class ("" none), and
// there was at least one.
func checkClasses(t *testing.T, s3 *recordingS3, prefix, class string) {
	t.Helper()
	ups, _ := s3.under(prefix)
	if len(ups) == 0 {
		t.Fatalf("no upload under %s", prefix)
	}
	for _, u := range ups {
		if u.class != class {
			t.Fatalf("%s carried storage class %q, want %q", u.path, u.class, class)
		}
	}
}
