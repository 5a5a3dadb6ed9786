package restcatalog

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/testing/leak"
	"github.com/floe-io/floe/proto/auth"
	"github.com/floe-io/floe/proto/restcatalog/spectest"
)

func TestMain(m *testing.M) { leak.VerifyTestMain(m) }

const testToken = "test-token-0123456789"

func testServer(t *testing.T, opts Options) (*httptest.Server, *fakeCatalog) {
	t.Helper()
	f := newFake(t.TempDir())
	f.addNamespace("sales")
	f.addNamespace("sales", "eu")
	f.addNamespace("web")
	f.addNamespace("deep", "er") // "deep" exists only as a parent
	for _, n := range []string{"orders", "orders_dlq", "refunds", "returns"} {
		f.addTable("sales", n)
	}
	f.addTable("sales", "eu", "invoices")
	if opts.Sync == nil {
		opts.Sync = f
	}
	srv := httptest.NewServer(New(f, opts))
	t.Cleanup(srv.Close)
	return srv, f
}

type call struct {
	name, method, path string
	header             map[string]string
	want               int
	errType            string // expected ErrorModel type
	body               string // substring of the body
	// noSpec skips the spec check: functions declare no 406, and the
	// spec's view 404 schema is an unwrapped ErrorModel although its
	// examples (and every client) use the wrapped IcebergErrorResponse.
	noSpec bool
}

func do(t *testing.T, srv *httptest.Server, c call) (*http.Request, *http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(c.method, srv.URL+c.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.header["Authorization"]; !ok {
		req.Header.Set("Authorization", "Bearer "+testToken)
	}
	for k, v := range c.header {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return req, resp, body
}

var calls = []call{
	{name: "config", method: "GET", path: "/v1/config?warehouse=any", want: 200, body: `"prefix":"floe"`},
	{name: "top namespaces", method: "GET", path: "/v1/floe/namespaces", want: 200, body: `"namespaces":[["deep"],["sales"],["web"]]`},
	{name: "no prefix", method: "GET", path: "/v1/namespaces", want: 200, body: `["sales"]`},
	{name: "child namespaces", method: "GET", path: "/v1/floe/namespaces?parent=sales", want: 200, body: `"namespaces":[["sales","eu"]]`},
	{name: "implicit parent", method: "GET", path: "/v1/floe/namespaces?parent=deep", want: 200, body: `[["deep","er"]]`},
	{name: "first page", method: "GET", path: "/v1/floe/namespaces?pageToken=&pageSize=2", want: 200, body: `"next-page-token":`},
	{name: "bad page size", method: "GET", path: "/v1/floe/namespaces?pageSize=0", want: 400, errType: "BadRequestException"},
	{name: "bad page token", method: "GET", path: "/v1/floe/namespaces?pageToken=%25%25", want: 400, errType: "BadRequestException"},
	// Valid base64 that this server never issued.
	{name: "foreign page token", method: "GET", path: "/v1/floe/namespaces?pageToken=c2FsZXM", want: 400, errType: "BadRequestException"},
	{name: "unknown prefix", method: "GET", path: "/v1/other/namespaces", want: 404, errType: "NotFoundException", noSpec: true},
	{name: "oauth", method: "POST", path: "/v1/oauth/tokens", want: 400, body: `"error":"unsupported_grant_type"`},
	{name: "unknown parent", method: "GET", path: "/v1/floe/namespaces?parent=nope", want: 404, errType: "NoSuchNamespaceException"},
	{name: "load namespace", method: "GET", path: "/v1/floe/namespaces/sales", want: 200, body: `"owner":"floe"`},
	{name: "load nested namespace", method: "GET", path: "/v1/floe/namespaces/sales%1Feu", want: 200, body: `"namespace":["sales","eu"]`},
	{name: "load missing namespace", method: "GET", path: "/v1/floe/namespaces/nope", want: 404, errType: "NoSuchNamespaceException"},
	{name: "head namespace", method: "HEAD", path: "/v1/floe/namespaces/web", want: 204},
	{name: "head missing namespace", method: "HEAD", path: "/v1/floe/namespaces/nope", want: 404},
	{name: "empty namespace part", method: "GET", path: "/v1/floe/namespaces/sales%1F", want: 400, errType: "BadRequestException"},
	{name: "list tables", method: "GET", path: "/v1/floe/namespaces/sales/tables", want: 200, body: `{"namespace":["sales"],"name":"orders"}`},
	{name: "list nested tables", method: "GET", path: "/v1/floe/namespaces/sales%1Feu/tables", want: 200, body: `"name":"invoices"`},
	{name: "list tables of missing namespace", method: "GET", path: "/v1/floe/namespaces/nope/tables", want: 404, errType: "NoSuchNamespaceException"},
	{name: "load table", method: "GET", path: "/v1/floe/namespaces/sales/tables/orders", want: 200, body: `"metadata-location":"file://`},
	{name: "load table refs", method: "GET", path: "/v1/floe/namespaces/sales/tables/orders?snapshots=refs", want: 200, body: `"format-version":2`},
	{name: "load table bad snapshots", method: "GET", path: "/v1/floe/namespaces/sales/tables/orders?snapshots=some", want: 400, errType: "BadRequestException"},
	{name: "load missing table", method: "GET", path: "/v1/floe/namespaces/sales/tables/nope", want: 404, errType: "NoSuchTableException", body: "sales.nope"},
	{name: "head table", method: "HEAD", path: "/v1/floe/namespaces/sales/tables/orders", want: 204},
	{name: "head missing table", method: "HEAD", path: "/v1/floe/namespaces/sales/tables/nope", want: 404},
	{name: "strong read", method: "GET", path: "/v1/floe/namespaces/sales/tables/orders", header: map[string]string{ConsistencyHeader: "strong"}, want: 200},
	{name: "bad consistency", method: "GET", path: "/v1/floe/namespaces", header: map[string]string{ConsistencyHeader: "eventual"}, want: 400, errType: "BadRequestException"},
	{name: "create namespace", method: "POST", path: "/v1/floe/namespaces", want: 403, errType: "ForbiddenException"},
	{name: "drop namespace", method: "DELETE", path: "/v1/floe/namespaces/sales", want: 403, errType: "ForbiddenException"},
	{name: "namespace properties", method: "POST", path: "/v1/floe/namespaces/sales/properties", want: 403, errType: "ForbiddenException"},
	{name: "create table", method: "POST", path: "/v1/floe/namespaces/sales/tables", want: 403, errType: "ForbiddenException"},
	{name: "commit table", method: "POST", path: "/v1/floe/namespaces/sales/tables/orders", want: 403, errType: "ForbiddenException"},
	{name: "drop table", method: "DELETE", path: "/v1/floe/namespaces/sales/tables/orders", want: 403, errType: "ForbiddenException"},
	{name: "register table", method: "POST", path: "/v1/floe/namespaces/sales/register", want: 403, errType: "ForbiddenException"},
	{name: "rename table", method: "POST", path: "/v1/floe/tables/rename", want: 403, errType: "ForbiddenException"},
	{name: "commit transaction", method: "POST", path: "/v1/floe/transactions/commit", want: 403, errType: "ForbiddenException"},
	{name: "report metrics", method: "POST", path: "/v1/floe/namespaces/sales/tables/orders/metrics", want: 204},
	{name: "views", method: "GET", path: "/v1/floe/namespaces/sales/views", want: 200, body: `"identifiers":[]`},
	{name: "functions", method: "GET", path: "/v1/floe/namespaces/sales/functions", want: 406, errType: "UnsupportedOperationException", noSpec: true},
	{name: "view", method: "GET", path: "/v1/floe/namespaces/sales/views/v", want: 404, errType: "NoSuchViewException", noSpec: true},
	{name: "no token", method: "GET", path: "/v1/floe/namespaces", header: map[string]string{"Authorization": ""}, want: 401, errType: "NotAuthorizedException"},
	{name: "wrong token", method: "GET", path: "/v1/config", header: map[string]string{"Authorization": "Bearer nope-nope-nope-nope-nope"}, want: 401, errType: "NotAuthorizedException"},
}

// TestEndpoint checks status, error type and body of each route, and that
// every request and response conforms to the OpenAPI spec.
func TestEndpoint(t *testing.T) {
	tokens, err := auth.Load("", testToken)
	if err != nil {
		t.Fatal(err)
	}
	srv, f := testServer(t, Options{Tokens: tokens})
	sc := spectest.New(t)
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			req, resp, body := do(t, srv, c)
			if resp.StatusCode != c.want {
				t.Fatalf("%s %s = %d, want %d: %s", c.method, c.path, resp.StatusCode, c.want, body)
			}
			if c.errType != "" {
				var em errorModel
				if err := json.Unmarshal(body, &em); err != nil || em.Error.Type != c.errType || em.Error.Code != c.want || em.Error.Message == "" {
					t.Fatalf("error body %s, want type %s", body, c.errType)
				}
				if p := repeatedPrefix(em.Error.Message); p != "" {
					t.Fatalf("error message %q repeats %q: wrap once", em.Error.Message, p)
				}
			}
			if c.body != "" && !strings.Contains(string(body), c.body) {
				t.Fatalf("body lacks %s:\n%s", c.body, body)
			}
			if c.noSpec {
				return
			}
			if err := sc.Check(c.method, req.URL.EscapedPath(), resp.StatusCode, body); err != nil {
				t.Error(err)
			}
		})
	}
	if f.syncs != 1 {
		t.Fatalf("strong reads synced %d times, want 1", f.syncs)
	}
}

// TestPaging walks namespaces and tables page by page.
func TestPaging(t *testing.T) {
	srv, _ := testServer(t, Options{})
	for _, c := range []struct {
		path string
		want []string
	}{
		{"/v1/floe/namespaces", []string{"deep", "sales", "web"}},
		{"/v1/floe/namespaces/sales/tables", []string{"orders", "orders_dlq", "refunds", "returns"}},
	} {
		for size := 1; size <= 5; size++ {
			var got []string
			tok := ""
			for pages := 0; ; pages++ {
				if pages > 10 {
					t.Fatal("paging does not end")
				}
				_, resp, body := do(t, srv, call{method: "GET", path: c.path + "?pageSize=" + string(rune('0'+size)) + "&pageToken=" + tok})
				if resp.StatusCode != 200 {
					t.Fatalf("%d %s", resp.StatusCode, body)
				}
				var r struct {
					Next       string     `json:"next-page-token"`
					Namespaces [][]string `json:"namespaces"`
					Idents     []struct {
						Name string `json:"name"`
					} `json:"identifiers"`
				}
				if err := json.Unmarshal(body, &r); err != nil {
					t.Fatal(err)
				}
				if len(r.Namespaces)+len(r.Idents) > size {
					t.Fatalf("page of %d > pageSize %d", len(r.Namespaces)+len(r.Idents), size)
				}
				for _, ns := range r.Namespaces {
					got = append(got, ns[0])
				}
				for _, id := range r.Idents {
					got = append(got, id.Name)
				}
				if r.Next == "" {
					break
				}
				tok = r.Next
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("%s size %d: %v, want %v", c.path, size, got, c.want)
			}
		}
	}
}

// TestIcebergGoClient uses iceberg-go's REST catalog against the endpoint.
func TestIcebergGoClient(t *testing.T) {
	tokens, err := auth.Load("", testToken)
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := testServer(t, Options{Tokens: tokens})
	ctx := context.Background()
	if _, err := rest.NewCatalog(ctx, "floe", srv.URL); err == nil {
		t.Fatal("a client without a token was let in")
	}
	sc := spectest.New(t)
	cat, err := rest.NewCatalog(ctx, "floe", srv.URL, rest.WithOAuthToken(testToken), rest.WithCustomTransport(sc.Transport(t, nil, "")))
	if err != nil {
		t.Fatal(err)
	}
	nss, err := cat.ListNamespaces(ctx, nil)
	if err != nil || len(nss) != 3 {
		t.Fatalf("namespaces %v %v", nss, err)
	}
	var names []string
	for id, err := range cat.ListTables(ctx, table.Identifier{"sales"}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.Join(id, "."))
	}
	if !slices.Equal(names, []string{"sales.orders", "sales.orders_dlq", "sales.refunds", "sales.returns"}) {
		t.Fatalf("tables %v", names)
	}
	tbl, err := cat.LoadTable(ctx, table.Identifier{"sales", "eu", "invoices"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Schema().NumFields() != 2 || !strings.HasSuffix(tbl.MetadataLocation(), "00000-1.metadata.json") {
		t.Fatalf("loaded %s with %s", tbl.MetadataLocation(), tbl.Schema())
	}
	if ok, err := cat.CheckTableExists(ctx, table.Identifier{"sales", "nope"}); ok || err != nil {
		t.Fatalf("exists nope: %v %v", ok, err)
	}
	if _, err := cat.LoadTable(ctx, table.Identifier{"sales", "nope"}); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("missing table: %v", err)
	}
	if err := cat.DropTable(ctx, table.Identifier{"sales", "orders"}); err == nil {
		t.Fatal("drop table was not refused")
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{"x"}, nil); err == nil {
		t.Fatal("create namespace was not refused")
	}
}

// repeatedPrefix returns the message's first "context: " segment when the
// message repeats it (an error wrapped twice with the same context).
func repeatedPrefix(msg string) string {
	first, rest, ok := strings.Cut(msg, ": ")
	if ok && strings.Contains(rest, first+": ") {
		return first
	}
	return ""
}

// TestETag: If-None-Match answers 304 by HTTP's weak comparison and for
// "*", 200 with the metadata otherwise.
func TestETag(t *testing.T) {
	srv, _ := testServer(t, Options{})
	path := "/v1/floe/namespaces/sales/tables/orders"
	_, resp, _ := do(t, srv, call{method: "GET", path: path})
	tag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || tag == "" {
		t.Fatalf("load: %d etag %q", resp.StatusCode, tag)
	}
	for _, c := range []struct {
		inm  string
		want int
	}{
		{tag, 304},
		{"W/" + tag, 304},
		{`"other", W/` + tag, 304},
		{"*", 304},
		{`"other"`, 200},
		{`W/"other"`, 200},
	} {
		_, resp, body := do(t, srv, call{method: "GET", path: path, header: map[string]string{"If-None-Match": c.inm}})
		if resp.StatusCode != c.want {
			t.Errorf("If-None-Match %s: %d, want %d: %s", c.inm, resp.StatusCode, c.want, body)
		}
	}
}
