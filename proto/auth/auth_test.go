package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

const (
	readTok  = "read-token-0123456789"
	adminTok = "admin-token-0123456789"
)

func TestCheck(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("# comment\n\n"+readTok+"\n"+adminTok+" admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := Load(file, "inline:colon-token-0123456789:admin")
	if err != nil {
		t.Fatal(err)
	}
	if tokens.Len() != 3 {
		t.Fatalf("tokens: %d", tokens.Len())
	}
	for _, c := range []struct {
		name, header string
		need         Scope
		want         error
	}{
		{"no header", "", ScopeRead, ErrNoToken},
		{"basic auth", "Basic eDp5", ScopeRead, ErrNoToken},
		{"unknown", "Bearer nope-nope-nope-nope", ScopeRead, ErrBadToken},
		{"read for read", "Bearer " + readTok, ScopeRead, nil},
		{"read for admin", "Bearer " + readTok, ScopeAdmin, ErrScope},
		{"admin for read", "bearer " + adminTok, ScopeRead, nil},
		{"admin for admin", "Bearer " + adminTok, ScopeAdmin, nil},
		{"token with colons", "Bearer inline:colon-token-0123456789", ScopeAdmin, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			if c.header != "" {
				r.Header.Set("Authorization", c.header)
			}
			if err := tokens.Check(r, c.need); !errors.Is(err, c.want) {
				t.Fatalf("Check = %v, want %v", err, c.want)
			}
		})
	}
}

func TestOffAndErrors(t *testing.T) {
	var none *Tokens
	if none.Enabled() || none.Check(httptest.NewRequest(http.MethodGet, "/", nil), ScopeAdmin) != nil {
		t.Fatal("nil tokens must accept everything")
	}
	empty, err := Load("", " , ")
	if err != nil || empty.Enabled() {
		t.Fatalf("empty: %v %v", empty.Enabled(), err)
	}
	for _, bad := range []string{"short", "short:admin"} {
		if _, err := Load("", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing"), ""); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestRequire(t *testing.T) {
	tokens, err := Load("", readTok)
	if err != nil {
		t.Fatal(err)
	}
	h := tokens.Require(ScopeAdmin, nil, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	for _, c := range []struct {
		header string
		want   int
	}{{"", 401}, {"Bearer " + readTok, 403}} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		if c.header != "" {
			r.Header.Set("Authorization", c.header)
		}
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("%q: %d, want %d", c.header, w.Code, c.want)
		}
	}
}

func TestPeerToken(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/tokens"
	if err := os.WriteFile(file, []byte("# c\nreadtoken-1234567890 read\nadmintoken-1234567890 admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		file, inline string
		need         Scope
		want         string
	}{
		{file, "", ScopeRead, "readtoken-1234567890"},
		{file, "", ScopeAdmin, "admintoken-1234567890"},
		{"", "a-read-token-123456:read,an-admin-token-12345:admin", ScopeAdmin, "an-admin-token-12345"},
		{"", "a-read-token-123456", ScopeRead, "a-read-token-123456"},
		{"", "a-read-token-123456", ScopeAdmin, ""},
		{"", "", ScopeRead, ""},
	}
	for _, c := range cases {
		if got := PeerToken(c.file, c.inline, c.need); got != c.want {
			t.Errorf("PeerToken(%q, %q, %s) = %q, want %q", c.file, c.inline, c.need, got, c.want)
		}
	}
}
