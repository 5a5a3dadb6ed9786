package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/grpc"

	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/proto/auth"
)

// Source produces the status report and readiness, and runs maintenance.
type Source interface {
	Report(ctx context.Context) (status.Report, error)
	// ClusterReport joins every member's report (status.MergeCluster):
	// what each node did for a table summed, the same on every node.
	ClusterReport(ctx context.Context) (status.Report, error)
	// Ready returns nil when the node can serve (joined, leader known).
	Ready() error
	// Maintain runs a table's maintenance now; table is namespace.name.
	// force compacts a table whose mapping disables compaction; without
	// it such a table's maintenance is refused (ErrConflict).
	Maintain(ctx context.Context, table string, force bool) (any, error)
}

// Server is the node's admin server: HTTP routes and, when it has a
// Backend (ListenAPI), the gRPC admin API and its HTTP gateway on the same
// port.
type Server struct {
	src    Source
	log    *slog.Logger
	srv    *http.Server
	ln     net.Listener
	mux    *http.ServeMux
	tokens *auth.Tokens // nil: authentication off
	grpc   *grpc.Server // nil without a Backend
	// maxBody caps request bodies and gRPC messages (limits.go).
	maxBody int64
}

// Listen binds addr and returns a server ready to Serve with the HTTP
// routes that need only a Source (health, readiness, status, maintenance,
// resume), unauthenticated as before. ListenAPI serves the full API.
func Listen(addr string, src Source, log *slog.Logger) (*Server, error) {
	return listen(addr, src, nil, Options{Log: log})
}

// routeSource serves the routes that need only a Source. The status report
// needs a read token, the POST routes an admin token (when tokens are set).
func (s *Server) routeSource(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /v1/status", s.require(auth.ScopeRead, s.status))
	mux.Handle("POST /v1/tables/{table}/maintenance", s.require(auth.ScopeAdmin, s.maintain))
	s.routeResume(mux) // resume.go
}

// Handle serves h for pattern next to the admin endpoints (the Iceberg REST
// catalog mounts itself at /iceberg/). It may be called while serving: a
// node mounts the catalog once it has joined the group.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Addr returns the bound address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves until Shutdown.
func (s *Server) Serve() error {
	if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops the server: HTTP (and the gRPC calls it carries)
// gracefully until ctx ends, then whatever gRPC calls remain.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if s.grpc != nil {
		s.grpc.Stop()
	}
	return err
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if err := s.src.Ready(); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

// status answers this node's report, or with ?scope=cluster the
// cluster-wide one (every member's joined; scope=node is the default),
// narrowed to the tables the query selects (table, q, state, offset,
// limit: status.ParseSelection) and counted in table_summary.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	report := s.src.Report
	switch scope := r.URL.Query().Get("scope"); scope {
	case "", "node":
	case "cluster":
		report = s.src.ClusterReport
	default:
		http.Error(w, fmt.Sprintf("scope: %q is not node or cluster", scope), http.StatusBadRequest)
		return
	}
	sel, err := status.ParseSelection(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rep, err := report(r.Context())
	if err != nil {
		s.log.Warn("building status", "err", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeIndentedJSON(w, status.Select(rep, sel))
}

func (s *Server) maintain(w http.ResponseWriter, r *http.Request) {
	force, err := forceParam(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	res, err := s.src.Maintain(r.Context(), r.PathValue("table"), force)
	if err != nil {
		s.log.Warn("maintenance", "table", r.PathValue("table"), "err", err)
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	writeIndentedJSON(w, res)
}

// writeIndentedJSON answers v as indented JSON, for people reading it with
// curl.
func writeIndentedJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// RunMaintenance asks a node to run a table's maintenance now and returns
// its JSON answer.
// force compacts a table whose mapping disables compaction.
func RunMaintenance(ctx context.Context, addr, table string, force bool) ([]byte, error) {
	path := "/v1/tables/" + table + "/maintenance"
	if force {
		path += "?force=true"
	}
	return post(ctx, addr, path, "maintenance of "+table)
}

// post sends an empty POST to a node's admin path and returns the body of a
// 200 answer; any other answer is an error naming what was refused.
func post(ctx context.Context, addr, path, what string) ([]byte, error) {
	return PostWith(ctx, http.DefaultClient, "http://"+addr, path, "", what)
}

// ErrRefused: a node answered a POST with a status other than 200.
var ErrRefused = errors.New("refused")

// PostWith sends an empty POST to base+path with client, with token as a
// bearer token when set, and returns the body of a 200 answer; any other
// answer is an error wrapping ErrRefused that names what was refused.
func PostWith(ctx context.Context, client *http.Client, base, path, token, what string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reaching floe at %s: %w", strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://"), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %w: %s", what, ErrRefused, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// Fetch gets the status report from a node's admin address.
func Fetch(ctx context.Context, addr string) (status.Report, error) {
	return FetchWith(ctx, http.DefaultClient, "http://"+addr, "")
}

// FetchWith gets the status report from base (http://host:port or
// https://...) with client, sending token as a bearer token when set.
func FetchWith(ctx context.Context, client *http.Client, base, token string) (status.Report, error) {
	addr := base
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/status", nil)
	if err != nil {
		return status.Report{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return status.Report{}, fmt.Errorf("reaching floe at %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return status.Report{}, fmt.Errorf("floe at %s answered %s", addr, resp.Status)
	}
	var rep status.Report
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		return status.Report{}, fmt.Errorf("decoding status from %s: %w", addr, err)
	}
	return rep, nil
}

// forceParam reads the maintenance request's optional force query
// parameter ("true"/"false", "1"/"0"); anything else is refused by name.
func forceParam(r *http.Request) (bool, error) {
	v := r.URL.Query().Get("force")
	if v == "" {
		return false, nil
	}
	force, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("force: %q is not a boolean (use force=true)", v)
	}
	return force, nil
}
