package backend

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/proto/admin"
)

// TestBackendJoiningThenStarted: on its own, over a node's Raft member and
// before the node has started, the backend refuses writes as unavailable,
// says it is joining in its report and readiness; once started it proposes
// writes through Raft (a mapping put, found again, unchanged when put
// again, deleted), and refuses malformed ones naming the field, members it
// does not know and the leader's own removal.
func TestBackendJoiningThenStarted(t *testing.T) {
	rn := openLeader(t)
	started := make(chan struct{})
	b := newTestBackend(rn, started)
	ctx := context.Background()
	m := admin.Mapping{Name: "clicks", Table: config.Table{Topic: "clicks", Namespace: "web", Format: "json"}}

	if err := b.Ready(); err == nil || !strings.Contains(err.Error(), "joining") {
		t.Fatalf("Ready while joining: %v", err)
	}
	if rep, err := b.Report(ctx); err != nil || rep.Problems["cluster"] == "" || len(rep.Members) != 1 {
		t.Fatalf("report while joining: %+v (%v)", rep, err)
	}
	if _, err := b.PutMapping(ctx, m, true); !errors.Is(err, admin.ErrUnavailable) {
		t.Fatalf("a write while joining: %v, want unavailable", err)
	}

	// The node registers itself (its protocol level) before it starts.
	wait.For(t, 10*time.Second, "n1 to register", func() bool {
		registered := false
		rn.FSM().Read(func(s *fsm.State) { registered = s.Nodes["n1"] != nil })
		return registered
	})
	close(started) // the node's worker runs
	if err := b.Ready(); err != nil {
		t.Fatalf("Ready once started: %v", err)
	}
	res, err := b.PutMapping(ctx, m, true)
	if err != nil || res.Index == 0 {
		t.Fatalf("put: %+v (%v)", res, err)
	}
	if res, err := b.PutMapping(ctx, m, false); err != nil || !res.Unchanged {
		t.Fatalf("the same mapping again: %+v (%v), want unchanged", res, err)
	}
	got, err := b.Mappings(ctx)
	if err != nil || len(got) != 1 || got[0].Name != "clicks" || got[0].Source != admin.MappingFromAPI {
		t.Fatalf("mappings: %+v (%v)", got, err)
	}
	bad := m
	bad.Name = "no spaces allowed"
	if _, err := b.PutMapping(ctx, bad, true); !errors.Is(err, admin.ErrInvalid) || !strings.Contains(err.Error(), "mapping.name") {
		t.Fatalf("a malformed name: %v, want invalid naming mapping.name", err)
	}
	if _, err := b.DeleteMapping(ctx, "clicks"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := b.DeleteMapping(ctx, "clicks"); !errors.Is(err, admin.ErrNotFound) {
		t.Fatalf("deleting it again: %v, want not found", err)
	}
	if _, err := b.DrainNode(ctx, "n9"); !errors.Is(err, admin.ErrNotFound) {
		t.Fatalf("draining an unknown member: %v, want not found", err)
	}
	// An operator's drain is marked as such (it outlives the node's
	// restarts) and only an undrain clears it; the node's own drain (at
	// shutdown) cannot be undone from outside.
	member := func() (m fsm.Member) {
		rn.FSM().Read(func(s *fsm.State) { m = *s.Nodes["n1"] })
		return m
	}
	if _, err := b.DrainNode(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	if m := member(); !m.Draining || !m.DrainedByOperator {
		t.Fatalf("after an operator's drain: %+v", m)
	}
	if res, err := b.UndrainNode(ctx, "n1"); err != nil || res.Unchanged {
		t.Fatalf("undrain: %+v (%v)", res, err)
	}
	if m := member(); m.Draining || m.DrainedByOperator {
		t.Fatalf("after undrain: %+v", m)
	}
	if res, err := b.UndrainNode(ctx, "n1"); err != nil || !res.Unchanged {
		t.Fatalf("undrain of a member not draining: %+v (%v), want unchanged", res, err)
	}
	if _, err := rn.Apply(ctx, fsm.DrainNode{ID: "n1", Draining: true}); err != nil { // as MarkDraining at shutdown
		t.Fatal(err)
	}
	if _, err := b.UndrainNode(ctx, "n1"); !errors.Is(err, admin.ErrConflict) || !strings.Contains(err.Error(), "drains itself") {
		t.Fatalf("undrain of a node's own drain: %v, want a conflict", err)
	}
	if _, err := b.RemoveNode(ctx, "n1"); !errors.Is(err, admin.ErrConflict) {
		t.Fatalf("removing the leader: %v, want a conflict", err)
	}
}
