package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
)

// TestMaintenanceCommitsAreFenced: expiry, orphan cleanup and compaction
// commits, in the loop and on demand, carry the committer role the loop
// read, and follow it when it changes.
func TestMaintenanceCommitsAreFenced(t *testing.T) {
	h := start(t, "dlq", func(h *harness) {
		h.cfg = func(c *Config) {
			c.ExpireInterval, c.OrphanInterval = 20*time.Millisecond, 20*time.Millisecond
			c.Tables[0].Compaction.MaxBytesPerHour = 1 << 40
		}
		h.c.rewrite = fakeRewrite{}
		h.k.produce("orders", 1, values(5, nil)...)
	})
	eventually(t, "committed", func() bool { return committedCount(h, key) == 5 })

	intents := func() map[string][]*fenceCall {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		return map[string][]*fenceCall{
			"Expire":        append([]*fenceCall(nil), h.c.expireIntents...),
			"CleanOrphans":  append([]*fenceCall(nil), h.c.orphanIntents...),
			"CommitRewrite": append([]*fenceCall(nil), h.c.rewriteIntents...),
		}
	}
	check := func(epoch uint64) {
		t.Helper()
		for call, ins := range intents() {
			if len(ins) == 0 {
				t.Fatalf("%s never called", call)
			}
			in := ins[len(ins)-1]
			switch {
			case in == nil:
				t.Fatalf("%s without a commit intent", call)
			case in.Table != key || in.Committer == nil || *in.Committer != (ledger.Assignment{Node: "n1", Epoch: epoch}):
				t.Fatalf("%s intent %+v (committer %+v), want table %q committer n1 epoch %d", call, in, in.Committer, key, epoch)
			case len(in.Entries) != 0 || in.At == 0:
				t.Fatalf("%s intent %+v: a maintenance intent names no entries and has a time", call, in)
			}
		}
	}
	eventually(t, "maintenance ran", func() bool {
		for _, ins := range intents() {
			if len(ins) == 0 {
				return false
			}
		}
		return true
	})
	check(1)

	h.c.setCommitter(key, ledger.Assignment{Node: "n1", Epoch: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// On demand, through the loop: every call it makes is fenced by epoch 2.
	if _, err := h.w.Maintain(ctx, key, false); err != nil {
		t.Fatal(err)
	}
	check(2)
}

// TestFencedCommit: a commit refused as coming from a stale committer
// (ledger.ErrStaleCommitter) is not a failure, and the loop does not retry
// it until the state shows another assignment; any other refusal is an
// ordinary failure, retried.
func TestFencedCommit(t *testing.T) {
	cases := []struct {
		name    string
		refusal error
		fenced  bool
	}{
		{"stale committer", errFakeFenced, true},
		{"another refusal", errors.New("refused, not as stale"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, "dlq", func(h *harness) {
				h.c.fenceCommit = tc.refusal
				h.k.produce("orders", 2, values(10, nil)...)
			})
			calls := func() int {
				h.c.mu.Lock()
				defer h.c.mu.Unlock()
				return h.c.commitCalls
			}
			eventually(t, "a commit attempted", func() bool { return calls() > 0 })
			if tc.fenced {
				// More state changes (new entries) and ticks, same role.
				h.k.produce("orders", 2, values(10, nil)...)
				eventually(t, "more recorded", func() bool { return len(h.c.Pending(key)) >= 2 })
				// Each round of the commit loop reads the role once: after
				// several rounds with entries pending and the role still
				// stale, a loop that retried would have committed again.
				rounds := func() int {
					h.c.mu.Lock()
					defer h.c.mu.Unlock()
					return h.c.committerReads
				}
				seen := rounds()
				eventually(t, "five more rounds of the commit loop", func() bool { return rounds() >= seen+5 })
				if n := calls(); n != 1 {
					t.Fatalf("%d commits attempted while the role stayed stale, want 1", n)
				}
				ts, _ := h.w.Status().Snapshot()
				if ts[key].CommitFailures != 0 || ts[key].State == status.StateDegraded {
					t.Fatalf("fenced commit counted as a failure: %+v", ts[key])
				}
			} else {
				eventually(t, "failure counted", func() bool {
					ts, _ := h.w.Status().Snapshot()
					return ts[key].CommitFailures > 0 && ts[key].State == status.StateDegraded
				})
			}
			// The role is renewed (a new epoch for this node): commits resume.
			h.c.mu.Lock()
			h.c.fenceCommit = nil
			h.c.mu.Unlock()
			h.c.setCommitter(key, ledger.Assignment{Node: "n1", Epoch: 2})
			eventually(t, "committed", func() bool { return len(h.c.Pending(key)) == 0 && committedCount(h, key) > 0 })
		})
	}
}

// fenceCall is what a fenced sink call carried: the table whose role
// fences it, the role, the ledger entries (none for maintenance) and the
// commit time.
type fenceCall struct {
	Table     string
	Committer *ledger.Assignment
	Entries   []string
	At        int64
}

func fenced(table string, a ledger.Assignment, at time.Time) *fenceCall {
	return &fenceCall{Table: table, Committer: &a, At: at.UnixMilli()}
}
