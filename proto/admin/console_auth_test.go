package admin

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/proto/auth"
)

// TestConsoleLogin: a wrong or missing token is refused and starts no
// session; a right one sets a session cookie that is HttpOnly,
// SameSite=Strict, has no expiry and does not carry the token; logout
// ends the session on the node, not only in the browser.
func TestConsoleLogin(t *testing.T) {
	b := &consoleBackend{fakeBackend: &fakeBackend{}, rep: consoleReport("")}
	base := startConsole(t, b, Options{Tokens: testTokens(t)})
	for _, c := range []struct {
		name  string
		token string
		want  int
	}{
		{"wrong token", "wrong-token-0123456789", http.StatusUnauthorized},
		{"no token", "", http.StatusUnauthorized},
		{"read token", readToken, http.StatusSeeOther},
		{"admin token", adminToken, http.StatusSeeOther},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := consoleClient(t)
			resp, body := send(t, cl, http.MethodPost, base+"/ui/login", url.Values{"token": {c.token}})
			if resp.StatusCode != c.want {
				t.Fatalf("login answered %s, want %d: %s", resp.Status, c.want, body)
			}
			if c.want != http.StatusSeeOther {
				if len(resp.Cookies()) != 0 {
					t.Fatalf("refused login set cookies %v", resp.Cookies())
				}
				if r, _ := send(t, cl, http.MethodGet, base+"/ui/", nil); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/ui/login" {
					t.Fatalf("overview after a refused login answered %s to %q", r.Status, r.Header.Get("Location"))
				}
				return
			}
			ck := resp.Cookies()
			if len(ck) != 1 || ck[0].Name != consoleCookie || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode ||
				!ck[0].Expires.IsZero() || ck[0].MaxAge != 0 || ck[0].Path != "/ui" || strings.Contains(ck[0].Value, c.token) {
				t.Fatalf("session cookie %+v", ck)
			}
			if strings.Contains(resp.Header.Get("Location"), c.token) {
				t.Fatalf("redirect carries the token: %s", resp.Header.Get("Location"))
			}
			r, page := send(t, cl, http.MethodGet, base+"/ui/", nil)
			if r.StatusCode != http.StatusOK || strings.Contains(page, c.token) {
				t.Fatalf("overview answered %s (token in page: %v)", r.Status, strings.Contains(page, c.token))
			}
			old := *ck[0]
			r, _ = send(t, cl, http.MethodPost, base+"/ui/logout", url.Values{"csrf": {csrfOf(t, page)}})
			if r.StatusCode != http.StatusSeeOther || len(r.Cookies()) != 1 || r.Cookies()[0].MaxAge >= 0 {
				t.Fatalf("logout answered %s with cookies %v", r.Status, r.Cookies())
			}
			// The old id sent again (a copied cookie) is no session.
			req, _ := http.NewRequest(http.MethodGet, base+"/ui/", nil)
			req.AddCookie(&old)
			r2, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			r2.Body.Close()
			if r2.StatusCode != http.StatusSeeOther {
				t.Fatalf("the logged-out session still answers %s", r2.Status)
			}
		})
	}
}

// TestConsoleActionScopes: a read session sees no action form and its
// POSTs are refused before the backend; an admin session's reach the
// backend as the API's do, recorded with the token's fingerprint.
func TestConsoleActionScopes(t *testing.T) {
	for _, c := range []struct {
		name      string
		token     string
		wantForms bool
		want      int
	}{
		{"read", readToken, false, http.StatusForbidden},
		{"admin", adminToken, true, http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &consoleBackend{fakeBackend: &fakeBackend{}, rep: consoleReport("")}
			base := startConsole(t, b, Options{Tokens: testTokens(t)})
			cl := consoleClient(t)
			login(t, cl, base, c.token)
			_, page := send(t, cl, http.MethodGet, base+"/ui/tables/db.orders", nil)
			for _, act := range []string{"pause", "resume", "rewind", "maintain"} {
				if got := strings.Contains(page, `action="/ui/tables/db.orders/`+act+`"`); got != c.wantForms {
					t.Errorf("%s form shown: %v, want %v", act, got, c.wantForms)
				}
			}
			csrf := csrfOf(t, page) // the logout form carries it for every session
			for _, act := range []string{"pause", "resume", "maintain"} {
				resp, body := send(t, cl, http.MethodPost, base+"/ui/tables/db.orders/"+act, url.Values{"csrf": {csrf}})
				if resp.StatusCode != c.want {
					t.Fatalf("%s answered %s, want %d: %s", act, resp.Status, c.want, body)
				}
			}
			if c.want != http.StatusOK {
				if n := b.callCount(); n != 0 {
					t.Fatalf("refused POSTs reached the backend %d times", n)
				}
				return
			}
			if n := b.callCount(); n != 3 {
				t.Fatalf("backend saw %d calls, want 3: %v", n, b.calls)
			}
			if got := b.callers[0]; got != auth.Fingerprint(adminToken) {
				t.Fatalf("pause recorded as %q, want %q", got, auth.Fingerprint(adminToken))
			}
		})
	}
}

// TestConsoleCSRF: an admin session's POST without its CSRF token, with a
// wrong one or with another session's is refused before the backend.
func TestConsoleCSRF(t *testing.T) {
	b := &consoleBackend{fakeBackend: &fakeBackend{}, rep: consoleReport("")}
	base := startConsole(t, b, Options{Tokens: testTokens(t)})
	other := consoleClient(t)
	login(t, other, base, adminToken)
	_, otherPage := send(t, other, http.MethodGet, base+"/ui/", nil)
	cl := consoleClient(t)
	login(t, cl, base, adminToken)
	for _, c := range []struct {
		name string
		form url.Values
	}{
		{"missing", url.Values{}},
		{"empty", url.Values{"csrf": {""}}},
		{"wrong", url.Values{"csrf": {"not-the-token"}}},
		{"another session's", url.Values{"csrf": {csrfOf(t, otherPage)}}},
		{"only in the query", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := base + "/ui/tables/db.orders/pause"
			if c.form == nil {
				u += "?csrf=" + url.QueryEscape(csrfOf(t, otherPage))
				c.form = url.Values{}
			}
			resp, body := send(t, cl, http.MethodPost, u, c.form)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "CSRF") {
				t.Fatalf("answered %s: %s", resp.Status, body)
			}
		})
	}
	if n := b.callCount(); n != 0 {
		t.Fatalf("refused POSTs reached the backend %d times", n)
	}
	// Another site's page posting with the browser's cookie.
	req, _ := http.NewRequest(http.MethodPost, base+"/ui/tables/db.orders/pause", strings.NewReader("csrf=x"))
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || b.callCount() != 0 {
		t.Fatalf("cross-site POST answered %s", resp.Status)
	}
}

// TestConsoleRewindConfirms: a rewind (and a resume past the bad record)
// first answers a confirmation page and changes nothing; the confirmed
// form reaches the backend with what was asked and who asked.
func TestConsoleRewindConfirms(t *testing.T) {
	b := &consoleBackend{fakeBackend: &fakeBackend{}, rep: consoleReport("")}
	base := startConsole(t, b, Options{Tokens: testTokens(t)})
	cl := consoleClient(t)
	login(t, cl, base, adminToken)
	_, page := send(t, cl, http.MethodGet, base+"/ui/tables/db.orders", nil)
	csrf := csrfOf(t, page)
	for _, c := range []struct {
		action string
		form   url.Values
		want   string
	}{
		{"rewind", url.Values{"to": {"timestamp"}, "timestamp": {"2026-11-30T08:15"}, "policy": {"replace"}}, "RewindTable db.orders replace"},
		{"resume", url.Values{"skip": {"true"}}, "ResumeTable db.orders true"},
	} {
		t.Run(c.action, func(t *testing.T) {
			f := url.Values{"csrf": {csrf}}
			for k, v := range c.form {
				f[k] = v
			}
			resp, confirm := send(t, cl, http.MethodPost, base+"/ui/tables/db.orders/"+c.action, f)
			if resp.StatusCode != http.StatusOK || !strings.Contains(confirm, `name="confirm" value="yes"`) {
				t.Fatalf("first POST answered %s without a confirmation: %s", resp.Status, confirm)
			}
			if b.lastCall() != "" && strings.HasPrefix(b.lastCall(), strings.Fields(c.want)[0]) {
				t.Fatalf("the unconfirmed %s reached the backend", c.action)
			}
			f.Set("confirm", "yes")
			resp, body := send(t, cl, http.MethodPost, base+"/ui/tables/db.orders/"+c.action, f)
			if resp.StatusCode != http.StatusOK || b.lastCall() != c.want {
				t.Fatalf("confirmed POST answered %s, backend saw %q: %s", resp.Status, b.lastCall(), body)
			}
		})
	}
	if want := time.Date(2026, 11, 30, 8, 15, 0, 0, time.UTC); !b.rewind.Timestamp.Equal(want) || b.rewinds[0] != auth.Fingerprint(adminToken) {
		t.Fatalf("rewind to %v by %v, want %v by the admin token", b.rewind.Timestamp, b.rewinds, want)
	}
}

// TestConsoleBodyLimits: the login form (read before the caller is known)
// is capped at consoleLoginMaxBytes, an action form at the API's cap.
func TestConsoleBodyLimits(t *testing.T) {
	b := &consoleBackend{fakeBackend: &fakeBackend{}, rep: consoleReport("")}
	base := startConsole(t, b, Options{Tokens: testTokens(t), MaxBodyBytes: 16 << 10})
	cl := consoleClient(t)
	resp, _ := send(t, cl, http.MethodPost, base+"/ui/login", url.Values{"token": {strings.Repeat("a", consoleLoginMaxBytes)}})
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized login answered %s", resp.Status)
	}
	login(t, cl, base, adminToken)
	_, page := send(t, cl, http.MethodGet, base+"/ui/", nil)
	resp, _ = send(t, cl, http.MethodPost, base+"/ui/tables/db.orders/pause", url.Values{"csrf": {csrfOf(t, page)}, "pad": {strings.Repeat("a", 16<<10)}})
	if resp.StatusCode != http.StatusRequestEntityTooLarge || b.callCount() != 0 {
		t.Fatalf("oversized action answered %s, backend calls %d", resp.Status, b.callCount())
	}
}

// TestSessionStoreBounds: sessions end after consoleIdle unused, and the
// store never holds more than consoleMaxSessions.
func TestSessionStoreBounds(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	st := newSessionStore()
	st.now = func() time.Time { return now }
	first := st.create(auth.ScopeRead, "a")
	for range consoleMaxSessions + 10 {
		now = now.Add(time.Second)
		st.create(auth.ScopeRead, "b")
	}
	if len(st.m) != consoleMaxSessions {
		t.Fatalf("store holds %d sessions, want %d", len(st.m), consoleMaxSessions)
	}
	if _, ok := st.get(first.id); ok {
		t.Fatal("the least recently used session survived the bound")
	}
	s := st.create(auth.ScopeAdmin, "c")
	now = now.Add(consoleIdle - time.Second)
	if _, ok := st.get(s.id); !ok {
		t.Fatal("a session used within consoleIdle ended")
	}
	now = now.Add(consoleIdle + time.Second)
	if _, ok := st.get(s.id); ok {
		t.Fatal("an idle session outlived consoleIdle")
	}
}
