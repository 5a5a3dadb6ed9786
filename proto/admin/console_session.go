package admin

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"sync"
	"time"

	"github.com/floe-io/floe/proto/auth"
)

// Console sessions. The browser keeps only a random session id in a
// session cookie (no Expires: it ends with the browser session), never the
// token: the node keeps, per session, the token's scope, who it names (the
// caller recorded with the changes it asks for) and the session's CSRF
// token. The token itself is checked once at login and not kept, like
// auth.Tokens keeps only digests.

const (
	// consoleCookie is the session cookie's name (path /ui).
	consoleCookie = "floe_console"
	// consoleIdle ends a session unused this long.
	consoleIdle = 12 * time.Hour
	// consoleMaxSessions bounds the sessions a node keeps; a login past it
	// ends the least recently used one.
	consoleMaxSessions = 1024
)

// consoleSession is one browser's console login.
type consoleSession struct {
	id   string
	csrf string // the per-session token every console form carries
	// scope is the login token's scope (admin with authentication off).
	scope auth.Scope
	// who is the caller recorded with the session's operator commands.
	who  string
	seen time.Time
}

// admin reports whether the session may act on tables.
func (s consoleSession) admin() bool { return s.scope == auth.ScopeAdmin }

// sessionStore holds the console's sessions in memory (a restart logs
// every browser out). Safe for concurrent use.
type sessionStore struct {
	mu  sync.Mutex
	m   map[string]*consoleSession
	now func() time.Time
}

func newSessionStore() *sessionStore {
	return &sessionStore{m: map[string]*consoleSession{}, now: time.Now}
}

// randomID returns 32 random bytes, base64url encoded.
func randomID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// create starts a session, ending expired ones and, at the bound, the
// least recently used.
func (st *sessionStore) create(scope auth.Scope, who string) consoleSession {
	st.mu.Lock()
	defer st.mu.Unlock()
	now := st.now()
	var lru *consoleSession
	for id, s := range st.m {
		if now.Sub(s.seen) > consoleIdle {
			delete(st.m, id)
			continue
		}
		if lru == nil || s.seen.Before(lru.seen) {
			lru = s
		}
	}
	if len(st.m) >= consoleMaxSessions && lru != nil {
		delete(st.m, lru.id)
	}
	s := &consoleSession{id: randomID(), csrf: randomID(), scope: scope, who: who, seen: now}
	st.m[s.id] = s
	return *s
}

// get returns the live session id names and marks it used.
func (st *sessionStore) get(id string) (consoleSession, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	s, ok := st.m[id]
	if !ok {
		return consoleSession{}, false
	}
	now := st.now()
	if now.Sub(s.seen) > consoleIdle {
		delete(st.m, id)
		return consoleSession{}, false
	}
	s.seen = now
	return *s, true
}

func (st *sessionStore) drop(id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.m, id)
}

// setSessionCookie hands the browser its session id: HttpOnly (no script
// reads it), SameSite=Strict (no other site's page sends it), Secure when
// the admin port serves TLS, and without Expires (gone with the browser
// session).
func setSessionCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{Name: consoleCookie, Value: id, Path: "/ui", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// clearSessionCookie tells the browser to forget its session id.
func clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: consoleCookie, Value: "", Path: "/ui", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}
