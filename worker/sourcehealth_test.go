package worker

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/logbuf"
	"github.com/floe-io/floe/worker/source"
)

// TestBrokerDownShownOnce: a broker that leads both partitions of a table
// goes down and comes back. The table shows DEGRADED with one reason naming
// the broker and both partitions, the node one problem and the broker's
// status; one WARN when it goes down, one INFO when it answers again; and
// everything clears.
func TestBrokerDownShownOnce(t *testing.T) {
	var logs logbuf.Buffer
	h := start(t, "dlq", func(h *harness) {
		h.k.produce("orders", 2, values(4, nil)...)
		h.log = slog.New(slog.NewTextHandler(&logs, nil))
	})
	eventually(t, "committed", func() bool { return committedCount(h, key) == 4 })
	p0, p1 := ledger.TopicPartition{Topic: "orders", Partition: 0}, ledger.TopicPartition{Topic: "orders", Partition: 1}
	now := time.Now()
	answered := now.Add(-20 * time.Second)
	h.k.setHealth(source.Health{
		Brokers: []source.BrokerHealth{{Addr: "b1:9092", NodeID: 1, Since: now.Add(-12 * time.Second), LastResponse: answered,
			Reason: "no answer for 12s (the broker is hung or the network drops its traffic)"}},
		Waiting: map[ledger.TopicPartition]string{p0: "b1:9092", p1: "b1:9092"},
		Leaders: map[ledger.TopicPartition]source.BrokerSeen{p0: {Addr: "b1:9092", LastResponse: answered}, p1: {Addr: "b1:9092", LastResponse: answered}},
	})
	eventually(t, "the table degraded with one reason", func() bool {
		ts, global := h.w.Status().Snapshot()
		r := ts[key].Reason
		return ts[key].State == status.StateDegraded && strings.Count(r, "broker b1:9092") == 1 &&
			strings.Contains(r, "kafka broker: 2 partitions (orders/0, orders/1) wait on broker b1:9092 (id 1), down for") &&
			strings.Contains(global[brokerProblem], "no answer for 12s")
	})
	ts, _ := h.w.Status().Snapshot()
	if ps := ts[key].Partitions[p0.String()]; ps == nil || ps.Leader != "b1:9092" || !ps.LeaderAnsweredAt.Equal(answered) {
		t.Fatalf("partition status %+v, want its leader and last answer", ps)
	}
	if bs := h.w.Status().Brokers(); len(bs) != 1 || bs[0].Up || bs[0].Partitions != 2 {
		t.Fatalf("brokers %+v, want b1 down leading 2 partitions", bs)
	}
	h.k.setHealth(source.Health{
		Brokers: []source.BrokerHealth{{Addr: "b1:9092", NodeID: 1, Up: true, LastResponse: time.Now()}},
		Leaders: map[ledger.TopicPartition]source.BrokerSeen{p0: {Addr: "b1:9092"}, p1: {Addr: "b1:9092"}},
	})
	eventually(t, "recovered", func() bool {
		ts, global := h.w.Status().Snapshot()
		return ts[key].State == status.StateRunning && ts[key].Reason == "" && global[brokerProblem] == ""
	})
	out := logs.String()
	if n := strings.Count(out, "kafka broker down"); n != 1 {
		t.Fatalf("%d WARN lines for one outage:\n%s", n, out)
	}
	if !strings.Contains(out, "level=WARN msg=\"kafka broker down\" node=n1 broker=b1:9092") || !strings.Contains(out, "level=INFO msg=\"kafka broker answers again\" node=n1 broker=b1:9092") {
		t.Fatalf("logs lack the outage's start and end:\n%s", out)
	}
}
