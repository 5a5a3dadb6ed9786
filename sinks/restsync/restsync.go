package restsync

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/floe-io/floe/internal/metaloc"
	"github.com/floe-io/floe/sinks/sink"
)

// Config is one external REST catalog.
type Config struct {
	Name      string
	URI       string // base URI, before /v1
	Warehouse string
	Prefix    string // empty: from /v1/config
	Token     string // static bearer token
	// OAuth2 client credentials, exchanged at TokenURI (default
	// <URI>/v1/oauth/tokens) for a bearer token.
	ClientID, ClientSecret, TokenURI, Scope string
	// SigV4, when set, signs every request (sigv4.go); Token and the
	// OAuth2 fields are then unused.
	SigV4 *SigV4
	// HTTPClient defaults to one with a 30 s timeout.
	HTTPClient *http.Client
}

// Syncer implements catalogsync.Catalog for one REST catalog.
type Syncer struct {
	c   *client
	log *slog.Logger
	// noOverwrite is set once the catalog showed that it ignores
	// registerTable's overwrite flag; from then on drop+register is used.
	noOverwrite atomic.Bool
}

// New returns a syncer for the catalog; it makes no request until the
// first sync, so a catalog that is down at start-up delays nothing.
func New(cfg Config, log *slog.Logger) *Syncer {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	if log == nil {
		log = slog.Default()
	}
	return &Syncer{c: &client{cfg: cfg, http: hc}, log: log}
}

// Name implements catalogsync.Catalog.
func (s *Syncer) Name() string { return s.c.cfg.Name }

type loadResult struct {
	MetadataLocation string `json:"metadata-location"`
}

type registerRequest struct {
	Name             string `json:"name"`
	MetadataLocation string `json:"metadata-location"`
	Overwrite        bool   `json:"overwrite,omitempty"`
}

// Sync implements catalogsync.Catalog.
func (s *Syncer) Sync(ctx context.Context, t sink.SyncTable) error {
	if err := s.c.init(ctx); err != nil {
		return fmt.Errorf("syncing %s to %s: %w", strings.Join(t.Ident, "."), s.Name(), err)
	}
	ns, name := t.Ident[:len(t.Ident)-1], t.Ident[len(t.Ident)-1]
	if err := s.ensureNamespace(ctx, ns); err != nil {
		return fmt.Errorf("syncing %s to %s: %w", strings.Join(t.Ident, "."), s.Name(), err)
	}
	if err := s.point(ctx, ns, name, t.MetadataLocation); err != nil {
		return fmt.Errorf("syncing %s to %s: %w", strings.Join(t.Ident, "."), s.Name(), err)
	}
	return nil
}

// nsPath is a namespace as a path segment: parts joined by the escaped
// unit separator, the spec's default.
func nsPath(ns []string) string {
	parts := make([]string, len(ns))
	for i, p := range ns {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "%1F")
}

func (s *Syncer) ensureNamespace(ctx context.Context, ns []string) error {
	uri := s.c.base() + "/namespaces/" + nsPath(ns)
	status, err := s.c.do(ctx, "checking namespace "+strings.Join(ns, "."), http.MethodHead, uri, nil, nil, http.StatusOK, http.StatusNoContent, http.StatusNotFound)
	if err != nil || status != http.StatusNotFound {
		return err
	}
	body := map[string]any{"namespace": ns, "properties": map[string]string{"created-by": "floe"}}
	_, err = s.c.do(ctx, "creating namespace "+strings.Join(ns, "."), http.MethodPost, s.c.base()+"/namespaces", body, nil, http.StatusOK, http.StatusConflict)
	if err == nil {
		s.log.Info("created namespace in rest catalog", "catalog", s.Name(), "namespace", strings.Join(ns, "."))
	}
	return err
}

// point makes the catalog's entry for the table point at loc.
func (s *Syncer) point(ctx context.Context, ns []string, name, loc string) error {
	tableURI := s.c.base() + "/namespaces/" + nsPath(ns) + "/tables/" + url.PathEscape(name)
	registerURI := s.c.base() + "/namespaces/" + nsPath(ns) + "/register"
	var cur loadResult
	status, err := s.c.do(ctx, "loading "+name, http.MethodGet, tableURI+"?snapshots=refs", nil, &cur, http.StatusOK, http.StatusNotFound)
	if err != nil {
		return err
	}
	if status == http.StatusNotFound {
		_, err := s.c.do(ctx, "registering "+name, http.MethodPost, registerURI, registerRequest{Name: name, MetadataLocation: loc}, nil, http.StatusOK)
		if err == nil {
			s.log.Info("registered table in rest catalog", "catalog", s.Name(), "table", name, "metadata", loc)
		}
		return err
	}
	switch {
	case cur.MetadataLocation == loc:
		return nil
	case metaloc.NewerThan(cur.MetadataLocation, loc):
		// A later committer already moved the entry past loc.
		return nil
	}
	if !s.noOverwrite.Load() {
		status, err := s.c.do(ctx, "re-registering "+name, http.MethodPost, registerURI,
			registerRequest{Name: name, MetadataLocation: loc, Overwrite: true}, &cur, http.StatusOK, http.StatusConflict, http.StatusBadRequest)
		if err != nil {
			return err
		}
		if status == http.StatusOK {
			return nil
		}
		// 409: the table exists and overwrite was ignored; 400: the field
		// is unknown. Either way this catalog needs drop+register.
		s.noOverwrite.Store(true)
		s.log.Info("rest catalog does not overwrite on register; using drop and register", "catalog", s.Name(), "status", status)
	}
	// Drop without purge: the catalog forgets the entry, the files stay
	// (they are Floe's).
	if _, err := s.c.do(ctx, "dropping "+name+" to re-register it", http.MethodDelete, tableURI+"?purgeRequested=false", nil, nil,
		http.StatusOK, http.StatusNoContent, http.StatusNotFound); err != nil {
		return err
	}
	_, err = s.c.do(ctx, "registering "+name, http.MethodPost, registerURI, registerRequest{Name: name, MetadataLocation: loc}, nil, http.StatusOK)
	return err
}
