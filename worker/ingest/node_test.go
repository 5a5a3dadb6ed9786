package ingest

import (
	"testing"

	"github.com/floe-io/floe/internal/config"
)

// limitedKafka is a Kafka whose readers can be bounded together.
type limitedKafka struct {
	Kafka
	limit int64
	set   bool
}

func (k *limitedKafka) SetQueueLimit(bytes int64) { k.limit, k.set = bytes, true }

// A node bounds its readers' queued records, all partitions together, to
// the fetch eighth of memory_budget, the part the budget leaves them.
func TestNodeBoundsReaderQueues(t *testing.T) {
	for _, tc := range []struct {
		name    string
		budget  config.ByteSize
		want    int64
		wantSet bool
	}{
		{name: "an eighth of the budget", budget: 64 << 20, want: 8 << 20, wantSet: true},
		{name: "no budget, no bound", budget: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &limitedKafka{}
			NewNode(Deps{Config: Config{MemoryBudget: tc.budget}, Kafka: k})
			if k.set != tc.wantSet || k.limit != tc.want {
				t.Fatalf("queue limit set %v to %d, want set %v to %d", k.set, k.limit, tc.wantSet, tc.want)
			}
		})
	}
}
