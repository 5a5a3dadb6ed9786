package admin

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/floe-io/floe/proto/auth"
)

// Resumer restarts a suspended or paused table; a Source may implement it.
type Resumer interface {
	// Resume restarts table (namespace.name) on every node; with skip,
	// past the records it is suspended at.
	Resume(ctx context.Context, table string, skip bool) (any, error)
}

// routeResume serves POST /v1/tables/{table}/resume[?skip=true] when the
// source can resume tables.
func (s *Server) routeResume(mux *http.ServeMux) {
	r, ok := s.src.(Resumer)
	if !ok {
		return
	}
	mux.Handle("POST /v1/tables/{table}/resume", s.require(auth.ScopeAdmin, func(w http.ResponseWriter, req *http.Request) {
		res, err := r.Resume(req.Context(), req.PathValue("table"), req.URL.Query().Get("skip") == "true")
		if err != nil {
			s.log.Warn("resume", "table", req.PathValue("table"), "err", err)
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(res)
	}))
}

// ResumeTable asks a node to resume a table and returns its JSON answer.
func ResumeTable(ctx context.Context, addr, table string, skip bool) ([]byte, error) {
	path := "/v1/tables/" + table + "/resume"
	if skip {
		path += "?skip=true"
	}
	return post(ctx, addr, path, "resume of "+table)
}
