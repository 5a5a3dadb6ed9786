package e2e

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/rss"
	"github.com/floe-io/floe/internal/testing/testnode"
)

// TestRecordLimitsEndToEnd: on a regex-mapped JSON topic, the records of
// issue 17 (10,000 levels deep, 5,000 keys, A beside a, a NUL key,
// ORDER_ID beside order_id) become dead letters naming the field and the
// limit, the table's columns stay those of the good records, the good
// records before and after them commit, and the node stays under 1 GiB of
// resident memory while it happens (one such record took 14 GB before),
// its heap growing by at most 512 MiB. The node runs in the test's process:
// rss.Measure returns earlier tests' freed memory to the OS and resets the
// kernel's high-water mark first, so the peak is this run's.
func TestRecordLimitsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(1, "lim.events")})
	keys := make([]string, 5000)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	bad := []struct{ value, want string }{
		{strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000), "field a nests deeper than max_nesting_depth 64"},
		{"{" + strings.Join(keys, ",") + "}", "more than max_columns 1000"},
		{`{"order_id":3,"A":1,"a":2}`, `field \"a\" collides with column \"A\"`},
		{`{"order_id":4,"a\u0000b":1}`, `field \"a\\x00b\": bad column name`},
		{`{"ORDER_ID":5}`, `field \"ORDER_ID\" collides with column \"order_id\"`},
	}
	var kvs [][2][]byte
	good := func(i int) [2][]byte { return [2][]byte{nil, []byte(fmt.Sprintf(`{"order_id":%d,"note":"n"}`, i))} }
	for i := range 3 {
		kvs = append(kvs, good(i))
	}
	for _, b := range bad {
		kvs = append(kvs, [2][]byte{nil, []byte(b.value)})
	}
	for i := range 3 {
		kvs = append(kvs, good(10+i))
	}
	produceRaw(t, cl, "lim.events", 0, kvs...)

	var peak atomic.Uint64
	var base runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // samples the heap while the node works
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{TopicRegex: `^lim\..*`, Namespace: "lim", Name: "{topic}", ErrorMode: "log"}})
	var n *node.Node
	res := rss.Measure(t, func() {
		var err error
		if n, err = testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Stop() })
		waitTable(t, n, "lim.lim_events", "all consumed", time.Minute, func(tr status.TableReport) bool {
			return tr.Rows == 6 && tr.DeadLetterRows == int64(len(bad))
		})
	})
	close(stop)
	<-sampled
	growth := int64(peak.Load()) - int64(base.HeapAlloc)
	t.Logf("heap grew by at most %d MiB; %v", growth>>20, res)
	if growth > 512<<20 {
		t.Fatalf("the heap grew by %d MiB", growth>>20)
	}
	if res.Peak >= 1<<30 {
		t.Fatalf("the node's resident memory peaked at %d MiB, over 1 GiB", res.Peak>>20)
	}
	var reasons []string
	for _, row := range tableRows(t, n, "lim", "lim_events_dlq") {
		reasons = append(reasons, row["error"])
	}
	joined := strings.Join(reasons, "\n")
	for _, b := range bad {
		if !strings.Contains(joined, b.want) {
			t.Errorf("no dead letter says %s:\n%.2000s", b.want, joined)
		}
	}
	tbl, err := n.Catalog().LoadTable(context.Background(), []string{"lim", "lim_events"})
	if err != nil {
		t.Fatal(err)
	}
	var payload []string
	for _, f := range tbl.Schema().Fields() {
		if !strings.HasPrefix(f.Name, "_kafka_") {
			payload = append(payload, f.Name)
		}
	}
	if strings.Join(payload, ",") != "order_id,note" {
		t.Fatalf("payload columns %v, want order_id and note", payload)
	}
}
