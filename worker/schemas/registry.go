package schemas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Schema types as the registry names them ("" means AVRO).
const (
	TypeAvro     = "AVRO"
	TypeProtobuf = "PROTOBUF"
	TypeJSON     = "JSON"
)

// Reference is a schema's import of another subject's version (Protobuf
// imports, Avro named types, JSON Schema $refs).
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// Schema is a registered schema.
type Schema struct {
	ID         int         `json:"id"`
	Subject    string      `json:"subject,omitempty"`
	Version    int         `json:"version,omitempty"`
	Type       string      `json:"schemaType,omitempty"`
	Text       string      `json:"schema"`
	References []Reference `json:"references,omitempty"`
}

// SchemaType returns the schema's type with the registry's default applied.
func (s *Schema) SchemaType() string {
	if s.Type == "" {
		return TypeAvro
	}
	return strings.ToUpper(s.Type)
}

// RegistryConfig says how to reach the registry.
type RegistryConfig struct {
	URL                string
	Username, Password string
	BearerToken        string
	Timeout            time.Duration // per request
	RefreshInterval    time.Duration // of a subject's latest version
	// NotFoundTTL: an id the registry did not know is asked again after
	// this long (a schema may be registered after the record that uses it
	// was produced); meanwhile records naming it are bad records at once.
	NotFoundTTL time.Duration
}

// Registry is a client of a Confluent-compatible Schema Registry. Safe for
// concurrent use.
type Registry struct {
	cfg  RegistryConfig
	base string
	http *http.Client

	mu       sync.Mutex
	byID     map[int]*Schema
	missing  map[int]time.Time // id -> when the registry said not found
	versions map[string]*Schema
	latest   map[string]latestEntry
}

type latestEntry struct {
	s  *Schema
	at time.Time
}

// NewRegistry returns a client.
func NewRegistry(cfg RegistryConfig) *Registry {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = time.Minute
	}
	if cfg.NotFoundTTL <= 0 {
		cfg.NotFoundTTL = 30 * time.Second
	}
	return &Registry{
		cfg: cfg, base: strings.TrimSuffix(cfg.URL, "/"),
		http:     &http.Client{Timeout: cfg.Timeout},
		byID:     map[int]*Schema{},
		missing:  map[int]time.Time{},
		versions: map[string]*Schema{},
		latest:   map[string]latestEntry{},
	}
}

// ByID returns the schema registered under id. Schemas are immutable, so
// a hit is cached for good.
func (r *Registry) ByID(ctx context.Context, id int) (*Schema, error) {
	r.mu.Lock()
	s, ok := r.byID[id]
	at, gone := r.missing[id]
	r.mu.Unlock()
	if ok {
		return s, nil
	}
	if gone && time.Since(at) < r.cfg.NotFoundTTL {
		return nil, fmt.Errorf("schema id %d: %w", id, ErrNotFound)
	}
	s = &Schema{}
	err := r.get(ctx, "/schemas/ids/"+strconv.Itoa(id), s)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if errorsIsNotFound(err) {
			r.missing[id] = time.Now()
		}
		return nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	s.ID = id
	r.byID[id] = s
	delete(r.missing, id)
	return s, nil
}

// Version returns one version of a subject (used for references);
// version -1 is the latest, refreshed every RefreshInterval. When a refresh
// fails the previous latest is kept and returned with no error: records
// keep decoding with it while the registry is away.
func (r *Registry) Version(ctx context.Context, subject string, version int) (*Schema, error) {
	if version < 0 {
		return r.Latest(ctx, subject)
	}
	key := subject + "@" + strconv.Itoa(version)
	r.mu.Lock()
	s, ok := r.versions[key]
	r.mu.Unlock()
	if ok {
		return s, nil
	}
	s = &Schema{}
	if err := r.get(ctx, "/subjects/"+url.PathEscape(subject)+"/versions/"+strconv.Itoa(version), s); err != nil {
		return nil, fmt.Errorf("subject %s version %d: %w", subject, version, err)
	}
	r.mu.Lock()
	r.versions[key] = s
	r.mu.Unlock()
	return s, nil
}

// Latest returns the latest version of a subject, looked up again once
// RefreshInterval has passed.
func (r *Registry) Latest(ctx context.Context, subject string) (*Schema, error) {
	r.mu.Lock()
	e, ok := r.latest[subject]
	r.mu.Unlock()
	if ok && time.Since(e.at) < r.cfg.RefreshInterval {
		return e.s, nil
	}
	s := &Schema{}
	err := r.get(ctx, "/subjects/"+url.PathEscape(subject)+"/versions/latest", s)
	if err != nil {
		if ok && !errorsIsNotFound(err) {
			return e.s, nil // stale but usable; the next call tries again
		}
		return nil, fmt.Errorf("latest version of subject %s: %w", subject, err)
	}
	r.mu.Lock()
	r.latest[subject] = latestEntry{s: s, at: time.Now()}
	if _, known := r.byID[s.ID]; !known && s.ID > 0 {
		r.byID[s.ID] = s
	}
	r.mu.Unlock()
	return s, nil
}

// registryError is an error answer of the registry.
type registryError struct {
	status int
	code   int
	msg    string
	cause  error
}

func (e *registryError) Error() string {
	if e.code != 0 {
		return fmt.Sprintf("registry answered %d (error %d: %s)", e.status, e.code, e.msg)
	}
	return fmt.Sprintf("registry answered %d: %s", e.status, e.msg)
}

func (e *registryError) Unwrap() error { return e.cause }

func errorsIsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

func (r *Registry) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+path, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json, application/json")
	switch {
	case r.cfg.BearerToken != "":
		req.Header.Set("Authorization", "Bearer "+r.cfg.BearerToken)
	case r.cfg.Username != "":
		req.SetBasicAuth(r.cfg.Username, r.cfg.Password)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%w: reading answer: %v", ErrUnavailable, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Code int    `json:"error_code"`
			Msg  string `json:"message"`
		}
		_ = json.Unmarshal(body, &e)
		if e.Msg == "" {
			e.Msg = strings.TrimSpace(string(body))
		}
		re := &registryError{status: resp.StatusCode, code: e.Code, msg: e.Msg, cause: ErrUnavailable}
		switch {
		case resp.StatusCode == http.StatusNotFound:
			re.cause = ErrNotFound
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			// Credentials are a configuration matter, but the records are
			// fine: retry (DEGRADED, with the reason) rather than lose them.
			re.cause = ErrUnavailable
		}
		return re
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%w: answer is not JSON: %v", ErrUnavailable, err)
	}
	return nil
}
