package admin

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/floe-io/floe/proto/auth"
)

// The status console: HTML pages at /ui on the admin port, rendered on the
// server with html/template from the same status report as GET /v1/status
// (and the same Backend as the API for snapshots and operator commands).
// Everything it serves is embedded below: no script, no build step, nothing
// fetched at run time. Reading needs a read token (entered once in a login
// form; console_session.go), acting on a table an admin token and the
// session's CSRF token in the form.

//go:embed console/*.html console/console.css
var consoleFiles embed.FS

// consoleLoginMaxBytes caps the login form's body: it is read before the
// caller is known, and a token and a CSRF field fit well within it.
const consoleLoginMaxBytes = 8 << 10

// console serves /ui for a Server.
type console struct {
	s        *Server
	b        Backend
	tmpl     *template.Template
	css      template.CSS
	csp      string
	sessions *sessionStore
	// cop refuses cross-origin POSTs by Sec-Fetch-Site and Origin, in
	// front of the CSRF token (which old browsers also need).
	cop *http.CrossOriginProtection
}

func newConsole(s *Server, b Backend) (*console, error) {
	css, err := consoleFiles.ReadFile("console/console.css")
	if err != nil {
		return nil, fmt.Errorf("reading the console's style sheet: %w", err)
	}
	tmpl, err := template.New("console").Funcs(consoleFuncs).ParseFS(consoleFiles, "console/*.html")
	if err != nil {
		return nil, fmt.Errorf("parsing the console's templates: %w", err)
	}
	sum := sha256.Sum256(css)
	// Only the one embedded style sheet runs: no script at all, forms post
	// only here, and no other site may frame the console.
	csp := "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	return &console{s: s, b: b, tmpl: tmpl, css: template.CSS(css), csp: csp, sessions: newSessionStore(), cop: http.NewCrossOriginProtection()}, nil
}

// routeConsole serves the console's pages on mux.
func (s *Server) routeConsole(mux *http.ServeMux, b Backend) error {
	c, err := newConsole(s, b)
	if err != nil {
		return err
	}
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/", http.StatusSeeOther) })
	mux.HandleFunc("GET /ui/{$}", c.withSession(c.overview))
	mux.HandleFunc("GET /ui/login", c.loginPage)
	mux.HandleFunc("POST /ui/login", c.login)
	mux.HandleFunc("POST /ui/logout", c.withSession(c.checkPost(c.logout)))
	mux.HandleFunc("GET /ui/tables/{table}", c.withSession(c.tablePage))
	mux.HandleFunc("POST /ui/tables/{table}/{action}", c.withSession(c.checkPost(c.action)))
	mux.HandleFunc("GET /ui/mappings", c.withSession(c.mappingsPage)) // console_mappings.go
	mux.HandleFunc("GET /ui/mappings/new", c.withSession(c.mappingEdit))
	mux.HandleFunc("GET /ui/mappings/{name}/edit", c.withSession(c.mappingEdit))
	mux.HandleFunc("POST /ui/mappings", c.withSession(c.checkPost(c.mappingSave)))
	mux.HandleFunc("POST /ui/mappings/{name}", c.withSession(c.checkPost(c.mappingSave)))
	mux.HandleFunc("POST /ui/mappings/{name}/delete", c.withSession(c.checkPost(c.mappingDelete)))
	return nil
}

// sessionHandler is a console handler that runs within a session.
type sessionHandler func(w http.ResponseWriter, r *http.Request, sess consoleSession)

// withSession finds the request's session. Without one, a GET goes to the
// login form and a POST is refused; with authentication off there is no
// login: a session (admin, like the API without tokens) starts at once.
func (c *console) withSession(h sessionHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ck, err := r.Cookie(consoleCookie); err == nil {
			if sess, ok := c.sessions.get(ck.Value); ok {
				h(w, r, sess)
				return
			}
		}
		if c.s.tokens.Enabled() {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
				return
			}
			c.refuse(w, r, http.StatusUnauthorized, errors.New("no console session: log in first"))
			return
		}
		sess := c.sessions.create(auth.ScopeAdmin, c.callerOf(r, ""))
		setSessionCookie(w, r, sess.id)
		h(w, r, sess)
	}
}

// checkPost guards a form POST: same origin, a body no larger than the
// API's, and the session's CSRF token (SameSite=Strict alone does not stop
// a sibling subdomain or an old browser).
func (c *console) checkPost(h sessionHandler) sessionHandler {
	return func(w http.ResponseWriter, r *http.Request, sess consoleSession) {
		if err := c.cop.Check(r); err != nil {
			c.refuse(w, r, http.StatusForbidden, err)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, c.s.maxBody)
		if err := r.ParseForm(); err != nil {
			code := http.StatusBadRequest
			if mb := (*http.MaxBytesError)(nil); errors.As(err, &mb) {
				code = http.StatusRequestEntityTooLarge
			}
			c.refuse(w, r, code, fmt.Errorf("reading the form: %w", err))
			return
		}
		got := r.PostFormValue("csrf")
		if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf)) != 1 {
			c.refuse(w, r, http.StatusForbidden, errors.New("the form's CSRF token is missing or wrong: reload the page and try again"))
			return
		}
		h(w, r, sess)
	}
}

// callerOf names who a session acts as, as the API names its callers
// (caller.go): a verified client certificate, else the token's
// fingerprint, else anonymous.
func (c *console) callerOf(r *http.Request, token string) string {
	if sub := certSubject(r.TLS); sub != "" {
		return sub
	}
	if c.s.tokens.Enabled() && token != "" {
		return auth.Fingerprint(token)
	}
	return "anonymous"
}

func (c *console) loginPage(w http.ResponseWriter, r *http.Request) {
	if !c.s.tokens.Enabled() {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	}
	c.render(w, http.StatusOK, "login", &loginView{page: page{Title: "Log in"}})
}

// login checks the token once and starts a session; the token goes no
// further (not in the cookie, a URL or the node's memory).
func (c *console) login(w http.ResponseWriter, r *http.Request) {
	if !c.s.tokens.Enabled() {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	}
	if err := c.cop.Check(r); err != nil {
		c.refuse(w, r, http.StatusForbidden, err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, consoleLoginMaxBytes)
	if err := r.ParseForm(); err != nil {
		c.refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Errorf("reading the login form: %w", err))
		return
	}
	tok := strings.TrimSpace(r.PostFormValue("token"))
	if err := c.s.tokens.CheckHeader("Bearer "+tok, auth.ScopeRead); err != nil {
		c.s.refused("POST /ui/login", r.RemoteAddr, err)
		c.render(w, http.StatusUnauthorized, "login", &loginView{page: page{Title: "Log in"}, Error: "That token is not accepted (" + err.Error() + ")."})
		return
	}
	scope := auth.ScopeRead
	if c.s.tokens.CheckHeader("Bearer "+tok, auth.ScopeAdmin) == nil {
		scope = auth.ScopeAdmin
	}
	if ck, err := r.Cookie(consoleCookie); err == nil {
		c.sessions.drop(ck.Value) // a new login never reuses an old id
	}
	sess := c.sessions.create(scope, c.callerOf(r, tok))
	setSessionCookie(w, r, sess.id)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

func (c *console) logout(w http.ResponseWriter, r *http.Request, sess consoleSession) {
	c.sessions.drop(sess.id)
	clearSessionCookie(w, r)
	target := "/ui/login"
	if !c.s.tokens.Enabled() {
		target = "/ui/"
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// refuse answers a refused console request with a page saying why, and
// logs it like the API's refusals.
func (c *console) refuse(w http.ResponseWriter, r *http.Request, code int, err error) {
	c.s.refused(r.Method+" "+r.URL.Path, r.RemoteAddr, err)
	c.render(w, code, "message", &messageView{page: page{Title: http.StatusText(code)}, Message: err.Error()})
}

// render executes a page template into a buffer first, so a template error
// is a clean 500 rather than half a page.
func (c *console) render(w http.ResponseWriter, code int, name string, data pageData) {
	data.setCSS(c.css)
	var buf bytes.Buffer
	if err := c.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		c.s.log.Error("rendering console page", "page", name, "err", err)
		http.Error(w, "rendering the page failed", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", c.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}
