package backend

import (
	"testing"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
)

// TestPartitionReportsHeld: a partition assigned to this node that it holds
// (draining, paused) is reported with the reason beside its assignment,
// whether or not its fetcher's status survives; a partition read here has
// no reason.
func TestPartitionReportsHeld(t *testing.T) {
	ti := tableInfo{
		offsets: map[string]ledger.Offsets{"orders/0": {Committed: 10, End: 12}, "orders/1": {Committed: 5, End: 5}},
		assign:  map[string]ledger.Assignment{"orders/0": {Node: "n1", Epoch: 3}, "orders/1": {Node: "n1", Epoch: 4}, "orders/2": {Node: "n1", Epoch: 2}},
	}
	rt := status.TableStatus{
		Partitions: map[string]*status.PartitionStatus{"orders/0": {Topic: "orders", Partition: 0, Epoch: 3, Fetched: 12, HighWatermark: 15}},
		Held: map[string]status.HeldPartition{
			"orders/1": {Topic: "orders", Partition: 1, Epoch: 4, Why: "draining"},
			"orders/2": {Topic: "orders", Partition: 2, Epoch: 2, Why: "paused"}, // never fetched: no offsets yet
		},
	}
	got := partitionReports(ti, rt, time.Now())
	want := map[int32]struct {
		held  string
		epoch uint64
	}{0: {"", 3}, 1: {"draining", 4}, 2: {"paused", 2}}
	if len(got) != len(want) {
		t.Fatalf("got %d partitions, want %d: %+v", len(got), len(want), got)
	}
	for _, p := range got {
		w := want[p.Partition]
		if p.Topic != "orders" || p.Held != w.held || p.Epoch != w.epoch || p.Node != "n1" {
			t.Errorf("partition %s/%d: held %q epoch %d node %q, want held %q epoch %d node n1", p.Topic, p.Partition, p.Held, p.Epoch, p.Node, w.held, w.epoch)
		}
	}
}
