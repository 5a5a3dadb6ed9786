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
	"strings"
	"time"
)

// Source produces the status report and readiness, and runs maintenance.
type Source interface {
	Report(ctx context.Context) (Report, error)
	// Ready returns nil when the node can serve (joined, leader known).
	Ready() error
	// Maintain runs a table's maintenance now; table is namespace.name.
	Maintain(ctx context.Context, table string) (any, error)
}

// Server is the node's admin HTTP server.
type Server struct {
	src Source
	log *slog.Logger
	srv *http.Server
	ln  net.Listener
	mux *http.ServeMux
}

// Listen binds addr and returns a server ready to Serve.
func Listen(addr string, src Source, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for admin on %s: %w", addr, err)
	}
	if log == nil {
		log = slog.Default()
	}
	mux := http.NewServeMux()
	s := &Server{src: src, log: log, ln: ln, mux: mux}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.HandleFunc("GET /v1/status", s.status)
	mux.HandleFunc("POST /v1/tables/{table}/maintenance", s.maintain)
	s.routeResume(mux) // resume.go
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return s, nil
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

// Shutdown stops the server.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if err := s.src.Ready(); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	rep, err := s.src.Report(r.Context())
	if err != nil {
		s.log.Warn("building status", "err", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(rep)
}

func (s *Server) maintain(w http.ResponseWriter, r *http.Request) {
	res, err := s.src.Maintain(r.Context(), r.PathValue("table"))
	if err != nil {
		s.log.Warn("maintenance", "table", r.PathValue("table"), "err", err)
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(res)
}

// RunMaintenance asks a node to run a table's maintenance now and returns
// its JSON answer.
func RunMaintenance(ctx context.Context, addr, table string) ([]byte, error) {
	return post(ctx, addr, "/v1/tables/"+table+"/maintenance", "maintenance of "+table)
}

// post sends an empty POST to a node's admin path and returns the body of a
// 200 answer; any other answer is an error naming what was refused.
func post(ctx context.Context, addr, path, what string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reaching floe at %s: %w", addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s refused: %s", what, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// Fetch gets the status report from a node's admin address.
func Fetch(ctx context.Context, addr string) (Report, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/status", nil)
	if err != nil {
		return Report{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Report{}, fmt.Errorf("reaching floe at %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Report{}, fmt.Errorf("floe at %s answered %s", addr, resp.Status)
	}
	var rep Report
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		return Report{}, fmt.Errorf("decoding status from %s: %w", addr, err)
	}
	return rep, nil
}
