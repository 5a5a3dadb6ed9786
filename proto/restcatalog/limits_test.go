package restcatalog

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// zeros is an endless body.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestListenerLimits: the catalog's own listener answers a body over
// MaxBodyBytes with 413 naming the limit, before authentication and
// without reading it, a header block over MaxHeaderBytes with 431, and
// still takes a Java client's small scan report.
func TestListenerLimits(t *testing.T) {
	f := newFake(t.TempDir())
	f.addNamespace("sales")
	f.addTable("sales", "orders")
	l, err := Listen("127.0.0.1:0", New(f, Options{Sync: f}), "", "")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- l.Serve() }()
	t.Cleanup(func() {
		_ = l.Shutdown(context.Background())
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	metrics := l.URI() + "/v1/namespaces/sales/tables/orders/metrics"
	post := func(t *testing.T, body io.Reader, n int64, header http.Header) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, metrics, body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = n
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	t.Run("small scan report", func(t *testing.T) {
		resp, body := post(t, strings.NewReader(`{"report-type":"scan-report"}`), 29, nil)
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("status %d %s", resp.StatusCode, body)
		}
	})
	t.Run("body over the limit", func(t *testing.T) {
		n := int64(100 << 20)
		resp, body := post(t, io.LimitReader(zeros{}, n), n, nil)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than the catalog's limit of 4194304 bytes") {
			t.Fatalf("status %d %s", resp.StatusCode, body)
		}
	})
	t.Run("header over the limit", func(t *testing.T) {
		h := http.Header{"X-Padding": {strings.Repeat("x", 2*MaxHeaderBytes)}}
		resp, body := post(t, strings.NewReader("{}"), 2, h)
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("status %d %s", resp.StatusCode, body)
		}
	})
}
