package raftnode

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestVerdictHere: when the leader answers a forwarded proposal with
// "upgrade required" (its FSM is halted, yet it committed the entry), the
// forwarding node answers with the verdict its own FSM recorded for the
// proposal's id: success for a write that committed, the refusal for one
// refused. Without an id, the leader's answer stands, naming the index.
func TestVerdictHere(t *testing.T) {
	g := newTestGroup(t, []string{"a"}, 1)
	n := g.leader()
	ctx := context.Background()
	// Until its own record is applied, a node proposes without ids.
	wait.For(t, 10*time.Second, "a registered", n.Registered)
	leaderErr := fsm.Halt{Index: 1, Type: 99} // what a halted leader answers
	propose := func(c fsm.Command) ([]byte, uint64, error) {
		t.Helper()
		data, err := n.encode(c)
		if err != nil {
			t.Fatal(err)
		}
		idx, err := n.applyLocal(ctx, data)
		return data, idx, err
	}

	data, idx, err := propose(CreateNamespace{Parts: []string{"db"}})
	if err != nil {
		t.Fatal(err)
	}
	if fsm.ProposalID(data) == "" {
		t.Fatal("the proposal carries no id: the group is below proposal ids")
	}
	if got, err := n.verdictHere(ctx, data, idx, "old", leaderErr); err != nil || got != idx {
		t.Fatalf("a committed write: %d, %v; want success at %d", got, err, idx)
	}

	data, idx, err = propose(fsm.DropNamespace{Parts: []string{"nope"}})
	if !errors.Is(err, fsm.ErrNoSuchNamespace) {
		t.Fatalf("dropping a namespace that does not exist: %v", err)
	}
	if _, err := n.verdictHere(ctx, data, idx, "old", leaderErr); !errors.Is(err, fsm.ErrNoSuchNamespace) || errors.Is(err, fsm.ErrUpgradeRequired) {
		t.Fatalf("a refused write: %v; want the refusal, not upgrade required", err)
	}

	plain, err := fsm.EncodeFor(fsm.ProtocolBase, "", CreateNamespace{Parts: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.verdictHere(ctx, plain, 7, "old", leaderErr); !errors.Is(err, fsm.ErrUpgradeRequired) || !strings.Contains(err.Error(), "index 7") {
		t.Fatalf("without a proposal id: %v; want the leader's answer naming the index", err)
	}
}
