package worker

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/worker/source"
)

// produceKeyed appends keyed messages to partition part of topic; a nil
// value is a tombstone.
func (k *fakeKafka) produceKeyed(topic string, partitions, part int, key string, value []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.topics[topic] == nil {
		k.topics[topic] = make([][]source.Message, partitions)
	}
	off := int64(len(k.topics[topic][part]))
	k.topics[topic][part] = append(k.topics[topic][part], source.Message{Offset: off, Key: []byte(key), Value: value, Time: time.UnixMilli(1_700_000_000_000 + off)})
	close(k.more)
	k.more = make(chan struct{})
}

// TestUpsertPipelineKeepsLastPerKey: an upsert table keyed by the Kafka
// key buffers tombstones as rows flagged to delete their key (json, where
// an append table drops them), writes at most one row per partition and
// key in a flush (the last), and what it commits, replayed in offset
// order, is the latest value per key of what was produced.
func TestUpsertPipelineKeepsLastPerKey(t *testing.T) {
	const parts, n = 2, 300
	model := map[string]string{}
	h := start(t, "log", func(h *harness) {
		h.cfg = func(c *Config) { c.Tables[0].Mode = config.ModeUpsert }
		for i := range n {
			k := i % 17
			key, part := fmt.Sprintf("k%d", k), k%parts
			id := fmt.Sprintf("%d|%s", part, key)
			if i%5 == 4 {
				h.k.produceKeyed("orders", parts, part, key, nil)
				delete(model, id)
				continue
			}
			v := fmt.Sprintf(`{"i":%d}`, i)
			h.k.produceKeyed("orders", parts, part, key, []byte(v))
			model[id] = fmt.Sprint(i)
		}
	})
	eventually(t, "every offset committed", func() bool {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		pos, ok := h.c.l.Position(key, ledger.TopicPartition{Topic: "orders", Partition: 0})
		pos1, ok1 := h.c.l.Position(key, ledger.TopicPartition{Topic: "orders", Partition: 1})
		return ok && ok1 && pos.Committed+pos1.Committed == n
	})
	h.stop()
	checkUpsertModel(t, h, model)
}

// checkUpsertModel replays the committed rows as the committer applies
// them (per partition in offset order; a tombstone deletes its key) and
// compares with the model; it also checks no written file holds a key
// twice in a partition.
func checkUpsertModel(t *testing.T, h *harness, model map[string]string) {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	for path, recs := range h.c.files {
		seen := map[string]bool{}
		for _, r := range recs {
			id := fmt.Sprintf("%d|%s", r.Partition, r.Key)
			if seen[id] {
				t.Fatalf("file %s holds key %s twice", path, id)
			}
			seen[id] = true
		}
	}
	rows := slices.Clone(h.c.committed[key])
	slices.SortStableFunc(rows, func(a, b *records.Record) int {
		if a.Partition != b.Partition {
			return int(a.Partition - b.Partition)
		}
		return int(a.Offset - b.Offset)
	})
	got := map[string]string{}
	for _, r := range rows {
		id := fmt.Sprintf("%d|%s", r.Partition, r.Key)
		if r.Tombstone {
			if r.Value != nil || r.JSON != nil {
				t.Fatalf("tombstone %s carries a value", id)
			}
			delete(got, id)
			continue
		}
		got[id] = fmt.Sprint(payload(t, r)["i"])
	}
	if len(got) != len(model) {
		t.Fatalf("%d live keys, want %d: %v vs %v", len(got), len(model), got, model)
	}
	for id, v := range model {
		if got[id] != v {
			t.Fatalf("key %s = %q, want %q", id, got[id], v)
		}
	}
}
