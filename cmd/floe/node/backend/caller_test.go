package backend

import (
	"strings"
	"testing"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
)

// TestOperatorStateShowsCaller: the status of a paused or rewound table
// names who paused or rewound it, and says "an operator" for a pause
// recorded without one (proposed by an older node).
func TestOperatorStateShowsCaller(t *testing.T) {
	tp := ledger.TopicPartition{Topic: "orders", Partition: 0}
	rw := &fsm.TableRewind{Gen: 1, At: 1767225609000, By: "cert:CN=ops",
		From: []fsm.RewindPosition{{TopicPartition: tp, Offset: 10}}, To: []fsm.RewindPosition{{TopicPartition: tp, Offset: 4}}}
	for _, c := range []struct {
		name      string
		pausedBy  string
		rw        *fsm.TableRewind
		wantWho   string
		wantByRew string
	}{
		{"paused by a token", "token:0123abcd", nil, "paused by token:0123abcd", ""},
		{"paused by an older node", "", nil, "paused by an operator", ""},
		{"paused and rewound", "token:0123abcd", rw, "paused by token:0123abcd", "cert:CN=ops"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := status.TableReport{Table: "db.orders"}
			operatorState(&tr, true, c.pausedBy, c.rw)
			if !strings.HasPrefix(tr.Reason, c.wantWho) || tr.PausedBy != c.pausedBy {
				t.Fatalf("reason %q paused_by %q, want %q", tr.Reason, tr.PausedBy, c.wantWho)
			}
			if c.rw == nil {
				return
			}
			if tr.Rewind == nil || tr.Rewind.By != c.wantByRew || !strings.Contains(tr.Rewind.Describe, "by "+c.wantByRew) {
				t.Fatalf("rewind %+v, want it by %s", tr.Rewind, c.wantByRew)
			}
		})
	}
}
