package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/floe-io/floe/cmd/floe/ctl"
)

// TestHealthCommand: floe health takes --addr like floe status (and
// --admin-addr, which container health checks use), and its exit codes are
// the CLI's: 4 for a node that answers not ready, 3 for one that does not
// answer.
func TestHealthCommand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			http.Error(w, "no leader", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	addr := strings.TrimPrefix(srv.URL, "http://")
	down := httptest.NewServer(http.NotFoundHandler())
	downAddr := strings.TrimPrefix(down.URL, "http://")
	down.Close()
	defer srv.Close()
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--addr", addr}, 0},
		{[]string{"--admin-addr", addr}, 0},
		{[]string{"--addr", addr, "--ready"}, ctl.ExitNotReady},
		{[]string{"--addr", downAddr}, ctl.ExitUnreachable},
	} {
		h := healthCmd()
		h.SetArgs(c.args)
		h.SetOut(&bytes.Buffer{})
		h.SilenceUsage, h.SilenceErrors = true, true
		err := h.Execute()
		code := 0
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		} else if err != nil {
			t.Fatalf("floe health %v: %v", c.args, err)
		}
		if code != c.code {
			t.Errorf("floe health %v: exit %d (%v), want %d", c.args, code, err, c.code)
		}
	}
}
