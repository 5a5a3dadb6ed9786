package restcatalog

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/proto/auth"
)

// Catalog is what the endpoint reads. catalog.Catalog (cluster/catalog)
// implements it; its errors wrap iceberg-go's catalog.ErrNoSuchTable and
// ErrNoSuchNamespace.
type Catalog interface {
	// ListNamespaces returns every namespace below parent, at any depth.
	ListNamespaces(ctx context.Context, parent table.Identifier) ([]table.Identifier, error)
	LoadNamespaceProperties(ctx context.Context, ns table.Identifier) (iceberg.Properties, error)
	ListTables(ctx context.Context, ns table.Identifier) iter.Seq2[table.Identifier, error]
	LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error)
}

// Syncer brings the local state up to what the leader had committed when
// Sync was called (raftnode.Node.Sync).
type Syncer interface {
	Sync(ctx context.Context) error
}

// ConsistencyHeader asks for a strong read: its value "strong" makes the
// server call Syncer.Sync before reading.
const ConsistencyHeader = "X-Floe-Consistency"

// MountPath is where nodes serve the endpoint; clients use
// http(s)://host:port/iceberg as the catalog URI.
const MountPath = "/iceberg"

// DefaultPrefix is the prefix /v1/config tells clients to use. Requests
// without a prefix are served too (Floe has one warehouse); another prefix
// is 404.
const DefaultPrefix = "floe"

// Options configure a Handler.
type Options struct {
	// Tokens authorizes requests (read scope); nil or empty: no auth.
	Tokens *auth.Tokens
	// Sync serves strong reads; nil makes them fail with 503.
	Sync Syncer
	// Strong makes every read strong.
	Strong bool
	// TableConfig is returned as the config of every loaded table (FileIO
	// properties such as s3.endpoint).
	TableConfig iceberg.Properties
	// SyncTimeout bounds a strong read's wait (default 5s).
	SyncTimeout time.Duration
	// Hide, when set, names the tables not published as Iceberg ([delta]
	// tables): they are neither listed nor loaded.
	Hide func(table.Identifier) bool
	Log  *slog.Logger
}

// Handler serves the Iceberg REST catalog API below MountPath-stripped
// paths (/v1/...).
type Handler struct {
	cat  Catalog
	opts Options
	h    http.Handler
}

// New returns the endpoint's handler, with authentication in front.
func New(cat Catalog, opts Options) *Handler {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.SyncTimeout <= 0 {
		opts.SyncTimeout = 5 * time.Second
	}
	if opts.Hide != nil {
		cat = published{Catalog: cat, hide: opts.Hide}
	}
	h := &Handler{cat: cat, opts: opts}
	h.h = limitBody(opts.Tokens.Require(auth.ScopeRead, refuseAuth, http.HandlerFunc(h.route)))
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.h.ServeHTTP(w, r) }

// Mount returns a handler that serves h below MountPath, for a mux that
// also serves other paths (the admin server).
func (h *Handler) Mount() http.Handler { return http.StripPrefix(MountPath, h) }

// route dispatches on the raw path: a namespace segment may hold an
// escaped unit separator (%1F) or an escaped slash, which a decoded path
// would lose.
func (h *Handler) route(w http.ResponseWriter, r *http.Request) {
	segs, err := splitPath(r.URL.EscapedPath())
	if err != nil || len(segs) == 0 || segs[0] != "v1" {
		writeError(w, http.StatusNotFound, "NoSuchEndpointException", fmt.Sprintf("no such endpoint: %s %s", r.Method, r.URL.Path))
		return
	}
	segs = segs[1:]
	if len(segs) == 1 && segs[0] == "config" {
		h.only(w, r, h.config, http.MethodGet)
		return
	}
	if len(segs) > 0 && segs[0] == "oauth" {
		// The spec's OAuthError shape (RFC 6749 5.2), which OAuth clients
		// parse, not the IcebergErrorResponse.
		writeOAuthError(w, "unsupported_grant_type", "floe issues no OAuth2 tokens: send a configured bearer token (catalog property token)")
		return
	}
	// Paths come with the prefix /v1/config advertises or none; another
	// prefix names a warehouse this server does not have.
	if len(segs) > 0 && !isRoot(segs[0]) {
		if segs[0] != DefaultPrefix {
			writeError(w, http.StatusNotFound, "NotFoundException", fmt.Sprintf("prefix %q: this catalog serves %q (see /v1/config)", segs[0], DefaultPrefix))
			return
		}
		segs = segs[1:]
	}
	if len(segs) == 0 {
		h.unsupported(w, r)
		return
	}
	switch segs[0] {
	case "tables", "transactions": // rename, multi-table commit
		h.refuse(w, r)
	case "namespaces":
		h.routeNamespaces(w, r, segs)
	default:
		h.unsupported(w, r)
	}
}

// routeNamespaces dispatches the paths below namespaces (segs[0]): the
// list, one namespace, and its tables and views.
func (h *Handler) routeNamespaces(w http.ResponseWriter, r *http.Request, segs []string) {
	switch len(segs) {
	case 1:
		h.only(w, r, h.listNamespaces, http.MethodGet)
		return
	case 2:
		ns, err := parseNamespace(segs[1])
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.getOrHead(w, r, func() { h.loadNamespace(w, r, ns) }, func() { h.namespaceExists(w, r, ns) })
		return
	}
	ns, err := parseNamespace(segs[1])
	if err != nil {
		h.fail(w, r, err)
		return
	}
	switch {
	case len(segs) == 3 && segs[2] == "tables":
		h.only(w, r, func(w http.ResponseWriter, r *http.Request) { h.listTables(w, r, ns) }, http.MethodGet)
	case len(segs) == 3 && segs[2] == "views":
		// Floe makes no views; an empty list lets engines that list views
		// next to tables (Trino, Spark) do so without an error.
		h.only(w, r, func(w http.ResponseWriter, r *http.Request) { h.listViews(w, r, ns) }, http.MethodGet)
	case len(segs) == 4 && segs[2] == "views" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		h.fail(w, r, fmt.Errorf("view %s.%s: %w", strings.Join(ns, "."), segs[3], ErrNoSuchView))
	case len(segs) == 3 && (segs[2] == "properties" || segs[2] == "register" || segs[2] == "register-view"):
		h.refuse(w, r)
	case len(segs) == 4 && segs[2] == "tables":
		ident := append(ns, segs[3])
		h.getOrHead(w, r, func() { h.loadTable(w, r, ident) }, func() { h.tableExists(w, r, ident) })
	case len(segs) == 5 && segs[2] == "tables" && segs[4] == "metrics" && r.Method == http.MethodPost:
		// Scan reports from Java clients: accepted and dropped, so that
		// a reader's scan does not log an error per query.
		w.WriteHeader(http.StatusNoContent)
	case len(segs) >= 5 && segs[2] == "tables" && r.Method == http.MethodPost && segs[4] == "unregister":
		h.refuse(w, r)
	default:
		h.unsupported(w, r)
	}
}

func isRoot(s string) bool {
	return s == "namespaces" || s == "tables" || s == "transactions" || s == "views"
}

// splitPath splits an escaped path into decoded segments.
func splitPath(escaped string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(strings.Trim(escaped, "/"), "/") {
		if s == "" {
			continue
		}
		d, err := url.PathUnescape(s)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// parseNamespace splits a decoded namespace path segment on the unit
// separator (the spec's default, which this server advertises).
func parseNamespace(s string) (table.Identifier, error) {
	parts := strings.Split(s, "\x1f")
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("namespace %q has an empty part: %w", strings.ReplaceAll(s, "\x1f", "%1F"), ErrBadRequest)
		}
	}
	return parts, nil
}

// only serves fn for the methods given; any other method is a write (or
// an unknown verb) and refused.
// getOrHead answers a GET (load) and a HEAD (exists) of one resource, and
// refuses any other method.
func (h *Handler) getOrHead(w http.ResponseWriter, r *http.Request, get, head func()) {
	switch r.Method {
	case http.MethodGet:
		get()
	case http.MethodHead:
		head()
	default:
		h.refuse(w, r)
	}
}

func (h *Handler) only(w http.ResponseWriter, r *http.Request, fn http.HandlerFunc, methods ...string) {
	for _, m := range methods {
		if r.Method == m {
			fn(w, r)
			return
		}
	}
	if r.Method == http.MethodHead || r.Method == http.MethodGet {
		h.unsupported(w, r)
		return
	}
	h.refuse(w, r)
}

func (h *Handler) refuse(w http.ResponseWriter, r *http.Request) {
	h.fail(w, r, fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, ErrReadOnly))
}

func (h *Handler) unsupported(w http.ResponseWriter, r *http.Request) {
	h.fail(w, r, fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, ErrUnsupported))
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, typ := classify(err)
	if status >= 500 {
		h.opts.Log.Warn("rest catalog request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeError(w, status, typ, err.Error())
}

// consistent waits for read-after-commit consistency when the server or
// the request asks for it.
func (h *Handler) consistent(r *http.Request) error {
	v := strings.ToLower(strings.TrimSpace(r.Header.Get(ConsistencyHeader)))
	switch v {
	case "", "local":
		if !h.opts.Strong {
			return nil
		}
	case "strong":
	default:
		return fmt.Errorf("header %s: %q: use strong or local: %w", ConsistencyHeader, v, ErrBadRequest)
	}
	if h.opts.Sync == nil {
		return fmt.Errorf("strong reads are not configured: %w", ErrUnavailable)
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.SyncTimeout)
	defer cancel()
	if err := h.opts.Sync.Sync(ctx); err != nil {
		return fmt.Errorf("catching up with the leader: %v: %w", err, ErrUnavailable)
	}
	return nil
}
