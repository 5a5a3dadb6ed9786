package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/proto/admin"
)

// TestUpgradeRequiredInStatusAndReadiness: a node whose build lacks a
// command it met in the log says so in its status (node state and a
// problem naming the entry) and fails /readyz with the same reason.
func TestUpgradeRequiredInStatusAndReadiness(t *testing.T) {
	rn := openLeader(t, fsm.Without(fsm.CmdPauseTable))
	n := newTestBackend(rn, make(chan struct{}))
	srv, err := admin.Listen("127.0.0.1:0", n, n.log)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve() }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })

	rep, err := n.Report(context.Background())
	if err != nil || rep.State != "" || rep.Problems["upgrade"] != "" {
		t.Fatalf("before the halt: state %q problems %v (%v)", rep.State, rep.Problems, err)
	}
	// The entry comes from a newer leader's log (this build's own proposer
	// refuses a command it lacks); the mixed-build group test in raftnode
	// has it arrive through Raft.
	pause, err := fsm.Encode(fsm.PauseTable{Table: "db\x1ft", At: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := rn.FSM().Apply(1000, pause); !errors.Is(err, fsm.ErrUpgradeRequired) {
		t.Fatalf("an entry this build lacks: %v", err)
	}
	h, _ := rn.FSM().Halted()

	rep, err = n.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.State != status.NodeUpgradeRequired || !strings.Contains(rep.Problems["upgrade"], "upgrade required: log entry") {
		t.Fatalf("status: state %q problems %v", rep.State, rep.Problems)
	}
	resp, err := http.Get("http://" + srv.Addr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), h.Error()) {
		t.Fatalf("/readyz: %d %q, want 503 %q", resp.StatusCode, body, h.Error())
	}
}

// TestUpgradeErrorsAreMarked: a refusal that a rolling upgrade explains (a
// command above a lagging member's protocol level, or this node halted)
// reaches the admin API marked ErrUpgradeRequired beside its code, with
// its text unchanged; other refusals are not marked.
func TestUpgradeErrorsAreMarked(t *testing.T) {
	low := &fsm.ProtocolError{Command: "rewind", Needs: 3, Minimum: 2, Lagging: []string{"n2 at level 2"}}
	halt := fsm.Halt{Index: 9, Type: 40}
	for _, tc := range []struct {
		err     error
		code    error
		upgrade bool
	}{
		{fmt.Errorf("proposing: %w", low), admin.ErrConflict, true},
		{fmt.Errorf("applying: %w", halt), admin.ErrUnavailable, true},
		{fmt.Errorf("creating: %w", fsm.ErrMappingExists), admin.ErrExists, false},
	} {
		got := apiErr(tc.err)
		if !errors.Is(got, tc.code) || errors.Is(got, admin.ErrUpgradeRequired) != tc.upgrade || !strings.HasSuffix(got.Error(), tc.err.Error()) {
			t.Errorf("apiErr(%v) = %v: want %v, upgrade %v", tc.err, got, tc.code, tc.upgrade)
		}
	}
}
