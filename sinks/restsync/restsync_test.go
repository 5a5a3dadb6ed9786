package restsync

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/testing/leak"
	"github.com/floe-io/floe/sinks/internal/mirrortest"
	"github.com/floe-io/floe/sinks/sink"
)

func TestMain(m *testing.M) { leak.VerifyTestMain(m) }

// fakeREST is a minimal external Iceberg REST catalog: config with a
// prefix, OAuth2 client credentials, namespaces, load, register (with or
// without honoring overwrite) and drop. It serves loaded tables from their
// metadata files, so iceberg-go's client can read what was synced.
type fakeREST struct {
	t         *testing.T
	overwrite bool // honor register's overwrite flag
	down      bool // answer every request 503 (SetDown)

	mu     sync.Mutex
	ns     map[string]bool
	tables map[string]string // "ns/name" -> metadata location
	calls  []string
	tokens int
}

const prefix = "wh1"

func (f *fakeREST) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	errOut := func(status int, typ, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": status}})
	}
	if f.down {
		errOut(503, "ServiceUnavailableException", "down")
		return
	}
	if r.URL.Path == "/v1/oauth/tokens" {
		_ = r.ParseForm()
		id, secret, basic := r.BasicAuth() // iceberg-go's oauth2 client uses basic auth
		if !basic {
			id, secret = r.Form.Get("client_id"), r.Form.Get("client_secret")
		}
		if r.Form.Get("grant_type") != "client_credentials" || id != "floe" || secret != "s3cret" {
			errOut(401, "NotAuthorizedException", "bad client")
			return
		}
		f.tokens++
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "tok", "token_type": "bearer", "expires_in": 3600})
		return
	}
	if r.Header.Get("Authorization") != "Bearer tok" {
		errOut(401, "NotAuthorizedException", "no token")
		return
	}
	if r.URL.Path == "/v1/config" {
		_ = json.NewEncoder(w).Encode(map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{"prefix": prefix}})
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/"+prefix+"/")
	if !ok {
		errOut(404, "NotFoundException", "wrong prefix in "+r.URL.Path)
		return
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 1 && parts[0] == "namespaces" && r.Method == http.MethodPost:
		var in struct{ Namespace []string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		key := strings.Join(in.Namespace, "\x1f")
		if f.ns[key] {
			errOut(409, "AlreadyExistsException", "exists")
			return
		}
		f.ns[key] = true
		_ = json.NewEncoder(w).Encode(map[string]any{"namespace": in.Namespace})
	case len(parts) == 2 && r.Method == http.MethodHead:
		if !f.ns[parts[1]] {
			w.WriteHeader(404)
			return
		}
		w.WriteHeader(204)
	case len(parts) == 3 && parts[2] == "register":
		if !f.ns[parts[1]] {
			errOut(404, "NoSuchNamespaceException", parts[1])
			return
		}
		var in struct {
			Name             string `json:"name"`
			MetadataLocation string `json:"metadata-location"`
			Overwrite        bool   `json:"overwrite"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		key := parts[1] + "/" + in.Name
		if _, exists := f.tables[key]; exists && !(in.Overwrite && f.overwrite) {
			errOut(409, "AlreadyExistsException", "table exists")
			return
		}
		f.tables[key] = in.MetadataLocation
		f.load(w, in.MetadataLocation)
	case len(parts) == 4 && parts[2] == "tables":
		key := parts[1] + "/" + parts[3]
		loc, ok := f.tables[key]
		if !ok {
			errOut(404, "NoSuchTableException", key)
			return
		}
		switch r.Method {
		case http.MethodGet:
			f.load(w, loc)
		case http.MethodDelete:
			if r.URL.Query().Get("purgeRequested") != "false" {
				f.t.Errorf("drop without purgeRequested=false: %s", r.URL)
			}
			delete(f.tables, key)
			w.WriteHeader(204)
		default:
			errOut(405, "BadRequestException", r.Method)
		}
	default:
		errOut(400, "BadRequestException", "unexpected "+r.Method+" "+r.URL.Path)
	}
}

func (f *fakeREST) load(w http.ResponseWriter, loc string) {
	meta, err := os.ReadFile(strings.TrimPrefix(loc, "file://"))
	if err != nil {
		f.t.Errorf("reading %s: %v", loc, err)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"metadata-location": loc, "metadata": json.RawMessage(meta), "config": map[string]string{}})
}

func (f *fakeREST) location(key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tables[key]
}

func (f *fakeREST) callList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeREST) setDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

func (f *fakeREST) alter(key, loc string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tables[key] = loc
}

func writeMetadata(t *testing.T, dir, v string) string {
	return mirrortest.WriteMetadata(t, dir, v, nil)
}

// TestMirrorConformance: a REST catalog mirror passes what every catalog
// mirror must do, whether the catalog honors register's overwrite or the
// mirror drops and registers again.
func TestMirrorConformance(t *testing.T) {
	for _, overwrite := range []bool{true, false} {
		t.Run(map[bool]string{true: "register overwrite", false: "drop and register"}[overwrite], func(t *testing.T) {
			mirrortest.Run(t, func(t *testing.T) mirrortest.Mirror {
				fake := &fakeREST{t: t, overwrite: overwrite, ns: map[string]bool{}, tables: map[string]string{}}
				srv := httptest.NewServer(fake)
				t.Cleanup(srv.Close)
				s := New(Config{Name: "polaris", URI: srv.URL, Warehouse: "wh", ClientID: "floe", ClientSecret: "s3cret"}, nil)
				key := func(ident []string) string { return strings.Join(ident, "/") }
				return mirrortest.Mirror{Sync: s.Sync, Drop: s.Drop, SetDown: fake.setDown,
					Location: func(ident []string) string { return fake.location(key(ident)) },
					Alter:    func(ident []string, loc string) { fake.alter(key(ident), loc) },
				}
			})
		})
	}
}

func TestSync(t *testing.T) {
	for _, overwrite := range []bool{true, false} {
		name := map[bool]string{true: "register overwrite", false: "drop and register"}[overwrite]
		t.Run(name, func(t *testing.T) {
			fake := &fakeREST{t: t, overwrite: overwrite, ns: map[string]bool{}, tables: map[string]string{}}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			dir := t.TempDir()
			m0, m1, m2 := writeMetadata(t, dir, "00000"), writeMetadata(t, dir, "00001"), writeMetadata(t, dir, "00002")
			s := New(Config{Name: "polaris", URI: srv.URL, Warehouse: "wh", ClientID: "floe", ClientSecret: "s3cret"}, nil)
			ctx := context.Background()
			st := sink.SyncTable{Key: "shop\x1forders", Ident: []string{"shop", "orders"}, MetadataLocation: m0}
			for i, loc := range []string{m0, m1, m1, m2} { // the suite checks where each lands
				st.MetadataLocation = loc
				if err := s.Sync(ctx, st); err != nil {
					t.Fatalf("sync %d: %v", i, err)
				}
			}
			calls := strings.Join(fake.callList(), "\n")
			if overwrite == strings.Contains(calls, "DELETE") {
				t.Fatalf("overwrite=%v but calls:\n%s", overwrite, calls)
			}
			if n := strings.Count(calls, "POST /v1/"+prefix+"/namespaces\n"); n != 1 {
				t.Fatalf("namespace created %d times:\n%s", n, calls)
			}
			if fake.tokens != 1 { // before iceberg-go's client asks for its own
				t.Fatalf("%d tokens fetched, want one cached", fake.tokens)
			}
			// iceberg-go's REST client sees the synced table.
			cat, err := rest.NewCatalog(ctx, "ext", srv.URL, rest.WithCredential("floe:s3cret"), rest.WithWarehouseLocation("wh"))
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := cat.LoadTable(ctx, table.Identifier{"shop", "orders"})
			if err != nil {
				t.Fatal(err)
			}
			if tbl.MetadataLocation() != m2 {
				t.Fatalf("iceberg-go loads %s, want %s", tbl.MetadataLocation(), m2)
			}
		})
	}
}

func TestAuthRefused(t *testing.T) {
	fake := &fakeREST{t: t, ns: map[string]bool{}, tables: map[string]string{}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	for _, cfg := range []Config{
		{Name: "r", URI: srv.URL, ClientID: "floe", ClientSecret: "wrong"},
		{Name: "r", URI: srv.URL, Token: "wrong"},
	} {
		err := New(cfg, nil).Sync(context.Background(), sink.SyncTable{Ident: []string{"a", "b"}, MetadataLocation: "x"})
		if !errors.Is(err, ErrAuth) {
			t.Fatalf("%+v: %v", cfg, err)
		}
	}
}
