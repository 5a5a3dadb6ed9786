package worker

import (
	"testing"

	"github.com/floe-io/floe/internal/ledger"
)

// TestRatesReported: partitions being fetched report a positive rate.
func TestRatesReported(t *testing.T) {
	h := start(t, "dlq", func(h *harness) { h.k.produce("orders", 2, values(200, nil)...) })
	eventually(t, "consumed", consumed(h, 200))
	r := h.w.Rates()
	for p := range int32(2) {
		if v := r[ledger.TopicPartition{Topic: "orders", Partition: p}]; v <= 0 {
			t.Fatalf("partition %d rate %v, want > 0 (all: %v)", p, v, r)
		}
	}
}
