package worker

import (
	"fmt"
	"testing"

	"github.com/floe-io/floe/internal/ledger"
)

// TestSchemaChangeThroughCommitter: a pipeline whose records gain a field
// does not evolve the table itself; it requests the change and waits, and
// the table's committer applies it fenced by its epoch, in order with its
// appends. While the committer role sits on a node that does not act, no
// file using the new field is recorded.
func TestSchemaChangeThroughCommitter(t *testing.T) {
	h := start(t, "dlq", func(h *harness) { h.k.produce("orders", 1, values(20, nil)...) })
	eventually(t, "first records committed", func() bool { return committedCount(h, key) == 20 })

	// The committer role moves to a node that is not running.
	h.c.setCommitter(key, ledger.Assignment{Node: "n2", Epoch: 2})
	var grown []string
	for i := 20; i < 40; i++ {
		grown = append(grown, fmt.Sprintf(`{"i":%d,"extra":"x%d"}`, i, i))
	}
	h.k.produce("orders", 1, grown...)
	eventually(t, "schema requested", func() bool { return len(h.c.SchemaRequests(key)) == 1 })
	if o, _ := h.c.Position(key, ledger.TopicPartition{Topic: "orders"}); o.End != 20 {
		t.Fatalf("records using the new field were recorded before the schema change: %+v", o)
	}

	// The role comes back to this node: it applies the request, then the
	// pipeline writes and the records commit.
	h.c.setCommitter(key, ledger.Assignment{Node: "n1", Epoch: 3})
	eventually(t, "all committed", func() bool { return committedCount(h, key) == 40 })
	// The fake counts every entry recorded while the request was pending,
	// so the whole wait is checked, not a moment of it.
	h.c.mu.Lock()
	early := h.c.recordedRequested[key]
	h.c.mu.Unlock()
	if early != 0 {
		t.Fatalf("records using the new field were recorded before the schema change: %d entries while the request was pending", early)
	}
	exactlyOnce(t, h, 40, 1, key)
	if reqs := h.c.SchemaRequests(key); len(reqs) != 0 {
		t.Fatalf("requests left: %+v", reqs)
	}
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	evolved := 0
	for _, p := range h.c.prepares {
		if !p.evolved {
			continue
		}
		evolved++
		if p.intent == nil || p.intent.Committer == nil || *p.intent.Committer != (ledger.Assignment{Node: "n1", Epoch: 3}) || len(p.intent.Entries) != 0 {
			t.Fatalf("schema change not fenced by the committer: %+v", p.intent)
		}
	}
	if evolved != 1 {
		t.Fatalf("%d schema changes, want 1", evolved)
	}
	if f := h.c.tables[key].Lookup("extra"); f == nil {
		t.Fatalf("table has no column extra: %s", h.c.tables[key])
	}
}
