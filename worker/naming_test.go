package worker

import (
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
)

// TestUnnameableTopicShown: a topic whose mapping expands into a table name
// longer than 255 bytes is not ingested and the node says why, naming the
// topic; other topics of the mapping flow.
func TestUnnameableTopicShown(t *testing.T) {
	long := "ev." + strings.Repeat("k", 246) // 249 bytes, Kafka's longest
	h := start(t, "dlq", func(h *harness) {
		h.cfg = func(c *Config) {
			c.Tables = []config.Table{{TopicRegex: `^ev\.(.*)$`, Namespace: "db", Name: "{1}_events_v2", Format: "json", ErrorMode: "dlq", StartOffset: "earliest"}}
		}
		h.k.produce(long, 1, "{}")
		h.k.produce("ev.short", 1, values(3, nil)...)
	})
	short := ledger.TableKey([]string{"db", "short_events_v2"})
	eventually(t, "short topic committed", func() bool { return committedCount(h, short) == 3 })
	eventually(t, "naming problem shown", func() bool {
		_, global := h.w.Status().Snapshot()
		msg := global["naming"]
		return strings.Contains(msg, "topic "+long[:20]) && strings.Contains(msg, "256 bytes, longer than 255") && strings.Contains(msg, "not ingested")
	})
}
