// Package registrytest is an in-process fake of a Confluent-compatible
// Schema Registry for tests: the REST calls Floe makes (schemas by id,
// subject versions) plus registration, with switches to make it fail,
// slow, or require credentials.
package registrytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Reference is a schema's reference to another subject's version.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

type schema struct {
	Schema     string      `json:"schema"`
	Type       string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
}

type version struct {
	id  int
	ver int
}

// Registry is the fake. Safe for concurrent use.
type Registry struct {
	*httptest.Server

	mu       sync.Mutex
	ids      map[int]schema
	subjects map[string][]version
	next     int

	down     atomic.Bool
	delay    atomic.Int64 // ns
	Requests atomic.Int64
	// Auth, when set, is the exact Authorization header required.
	auth atomic.Value
}

// New starts a fake registry; it stops when the test ends (call Close).
func New() *Registry {
	r := &Registry{ids: map[int]schema{}, subjects: map[string][]version{}, next: 1}
	r.auth.Store("")
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// SetDown makes every request fail with 503 (true) or work again.
func (r *Registry) SetDown(down bool) { r.down.Store(down) }

// SetDelay delays every answer.
func (r *Registry) SetDelay(d time.Duration) { r.delay.Store(int64(d)) }

// RequireAuth requires an exact Authorization header ("" for none).
func (r *Registry) RequireAuth(header string) { r.auth.Store(header) }

// Register adds a schema under subject (a new version unless the latest is
// the same text) and returns its id. typ is AVRO, PROTOBUF or JSON.
func (r *Registry) Register(subject, typ, text string, refs ...Reference) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if typ == "AVRO" {
		typ = ""
	}
	for id, s := range r.ids {
		if s.Schema == text && s.Type == typ {
			vs := r.subjects[subject]
			if len(vs) > 0 && vs[len(vs)-1].id == id {
				return id
			}
			r.subjects[subject] = append(vs, version{id: id, ver: len(vs) + 1})
			return id
		}
	}
	id := r.next
	r.next++
	r.ids[id] = schema{Schema: text, Type: typ, References: refs}
	vs := r.subjects[subject]
	r.subjects[subject] = append(vs, version{id: id, ver: len(vs) + 1})
	return id
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.Requests.Add(1)
	if d := time.Duration(r.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-req.Context().Done():
			return
		}
	}
	if r.down.Load() {
		writeErr(w, http.StatusServiceUnavailable, 50003, "registry is down (test)")
		return
	}
	if want := r.auth.Load().(string); want != "" && req.Header.Get("Authorization") != want {
		writeErr(w, http.StatusUnauthorized, 401, "unauthorized")
		return
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case req.Method == http.MethodGet && len(parts) == 3 && parts[0] == "schemas" && parts[1] == "ids":
		id, _ := strconv.Atoi(parts[2])
		s, ok := r.ids[id]
		if !ok {
			writeErr(w, http.StatusNotFound, 40403, fmt.Sprintf("Schema %d not found", id))
			return
		}
		writeJSON(w, s)
	case req.Method == http.MethodGet && len(parts) == 1 && parts[0] == "subjects":
		var out []string
		for s := range r.subjects {
			out = append(out, s)
		}
		writeJSON(w, out)
	case req.Method == http.MethodGet && len(parts) == 4 && parts[0] == "subjects" && parts[2] == "versions":
		vs := r.subjects[parts[1]]
		if len(vs) == 0 {
			writeErr(w, http.StatusNotFound, 40401, "Subject not found")
			return
		}
		v := vs[len(vs)-1]
		if parts[3] != "latest" {
			n, err := strconv.Atoi(parts[3])
			if err != nil || n < 1 || n > len(vs) {
				writeErr(w, http.StatusNotFound, 40402, "Version not found")
				return
			}
			v = vs[n-1]
		}
		s := r.ids[v.id]
		writeJSON(w, map[string]any{"subject": parts[1], "version": v.ver, "id": v.id,
			"schema": s.Schema, "schemaType": s.Type, "references": s.References})
	default:
		writeErr(w, http.StatusNotFound, 404, "no such endpoint in the fake registry")
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error_code": code, "message": msg})
}
