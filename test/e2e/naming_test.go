package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
)

// TestNameTemplatesAndLocations: a regex mapping names namespaces and tables
// from capture groups, a namespace's tables live under its own location, and
// two topics that sanitize to the same table are a CONFIG_ISSUE naming both,
// with only the first ingested.
func TestNameTemplatesAndLocations(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(1, "sales.events.order-created"), kfake.SeedTopics(1, "sales.events.order_created"), kfake.SeedTopics(1, "ops.events.alert")})
	for _, topic := range []string{"sales.events.order-created", "sales.events.order_created", "ops.events.alert"} {
		testnode.Produce(t, cl, topic, []string{`{"a":1}`, `{"a":2}`}, 1)
	}
	dir := t.TempDir()
	cfg := testnode.Config(t, dir, kc.ListenAddrs(), []config.Table{{TopicRegex: `^(?P<team>[a-z]+)\.events\.(.+)$`, Namespace: "{team}", Name: "{2}_events"}})
	cfg.Namespaces = map[string]config.Namespace{"sales": {Location: "file://" + filepath.Join(dir, "sales-lake")}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	testnode.WaitRows(t, n, "ops.alert_events", 2, time.Minute)
	testnode.WaitRows(t, n, "sales.order_created_events", 2, time.Minute)
	rep := waitReport(t, n, "collision reported", func(r status.Report) bool {
		tr, _ := tableReport(r, "sales.order_created_events")
		return tr.State == "CONFIG_ISSUE"
	})
	tr, _ := tableReport(rep, "sales.order_created_events")
	if !strings.Contains(tr.Reason, "sales.events.order-created") || !strings.Contains(tr.Reason, "sales.events.order_created") {
		t.Fatalf("reason %q does not name both topics", tr.Reason)
	}
	for _, p := range tr.Partitions {
		if p.Topic != "sales.events.order-created" {
			t.Fatalf("the colliding topic was ingested: %+v", tr.Partitions)
		}
	}
	tbl, err := n.Catalog().LoadTable(context.Background(), []string{"sales", "order_created_events"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "file://" + filepath.Join(dir, "sales-lake", "order_created_events"); tbl.Location() != want {
		t.Fatalf("location %s, want %s", tbl.Location(), want)
	}
	ops, err := n.Catalog().LoadTable(context.Background(), []string{"ops", "alert_events"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ops.Location(), cfg.Warehouse.Location+"/ops/") {
		t.Fatalf("ops location %s", ops.Location())
	}
}
