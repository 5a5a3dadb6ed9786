package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
)

// catalogRows returns a table's catalog status rows by catalog name.
func catalogRows(t *testing.T, n *node.Node, table string) map[string]status.CatalogReport {
	t.Helper()
	rep, _ := n.Report(context.Background())
	tr, _ := tableReport(rep, table)
	out := map[string]status.CatalogReport{}
	for _, c := range tr.Catalogs {
		out[c.Catalog] = c
	}
	return out
}

// TestGlueSyncDelta: a table written as [iceberg, delta] is registered in
// Glue twice (orders as Iceberg, orders_delta as a native Delta table), an
// Iceberg-only table once; the status shows each entry's sync, and a
// failing Delta entry shows its error and lag while the Iceberg entry
// stays in sync, then catches up.
func TestGlueSyncDelta(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	fake := fakeGlue(t)
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(1, "orders", "plain")})
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{
		{Topic: "orders", Namespace: "shop", Formats: []string{config.FormatIceberg, config.FormatDelta},
			Delta: config.DeltaSettings{CheckpointInterval: 2}},
		{Topic: "plain", Namespace: "shop"},
	})
	cfg.CommitInterval = config.Duration(200 * time.Millisecond)
	cfg.Catalogs.Glue = config.Glue{Enabled: true, Region: "eu-west-1", Endpoint: fake.URL, SkipArchive: true}
	cfg.Catalogs.SyncInterval = config.Duration(200 * time.Millisecond)
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	rows, dead := 0, 0
	batch := func() {
		var vals []string
		for i := rows; i < rows+50; i++ {
			vals = append(vals, fmt.Sprintf(`{"id":%d}`, i))
		}
		rows += 50
		testnode.Produce(t, cl, "orders", vals, 1)
		testnode.Produce(t, cl, "plain", vals, 1)
		testnode.WaitRows(t, n, "shop.orders", int64(rows+dead), time.Minute)
	}
	testnode.Produce(t, cl, "orders", []string{"not json"}, 1) // a dead letter: orders_dlq, in both formats too
	dead++
	batch()
	wait.Until(t, time.Minute, "both entries in sync", func() error {
		c := catalogRows(t, n, "shop.orders")
		if !c["glue"].InSync || !c["glue-delta"].InSync {
			return fmt.Errorf("status %+v", c)
		}
		if _, ok := fake.Table("shop", "orders_delta"); !ok {
			return fmt.Errorf("no delta entry")
		}
		if p := catalogRows(t, n, "shop.plain"); len(p) != 1 || !p["glue"].InSync {
			return fmt.Errorf("iceberg-only table's status %+v", p)
		}
		if _, ok := fake.Table("shop", "orders_dlq"); !ok {
			return fmt.Errorf("no dead-letter entry")
		}
		if _, ok := fake.Table("shop", "orders_dlq_delta"); !ok {
			return fmt.Errorf("no dead-letter delta entry")
		}
		return nil
	})
	// The dead-letter table follows its table's formats: its own Delta log
	// (sinks/delta/follow_dlq.go) and Glue Delta entry.
	dlqLog := filepath.Join(strings.TrimPrefix(cfg.Warehouse.Location, "file://"), "shop", "orders_dlq", "_delta_log", "00000000000000000000.json")
	if _, err := os.Stat(dlqLog); err != nil {
		t.Fatalf("the dead-letter table has no delta log: %v", err)
	}
	if dd, ok := fake.Table("shop", "orders_dlq_delta"); !ok || dd.Parameters["table_type"] != "DELTA" ||
		!strings.HasSuffix(strings.TrimSuffix(dd.Location, "/"), "/shop/orders_dlq") {
		t.Fatalf("the dead-letter table's delta entry %+v (%v)", dd, ok)
	}
	tb, _ := fake.Table("shop", "orders_delta")
	if tb.Parameters["table_type"] != "DELTA" || tb.Parameters["spark.sql.sources.provider"] != "delta" || len(tb.Columns) == 0 {
		t.Fatalf("delta entry %+v", tb)
	}
	if ice, _ := fake.Table("shop", "orders"); ice.Parameters["table_type"] != "ICEBERG" || tb.Location == "" || ice.Location != tb.Location {
		t.Fatalf("iceberg entry %+v beside delta entry at %s", ice, tb.Location)
	}
	if _, ok := fake.Table("shop", "plain_delta"); ok {
		t.Fatal("an iceberg-only table was registered as delta")
	}

	// Someone takes the Delta entry's name for another table: Floe refuses
	// to overwrite it, and the status says so for the Delta entry only.
	fake.Alter("shop", "orders_delta", map[string]string{"table_type": "HIVE"})
	batch()
	var bad map[string]status.CatalogReport
	waitReport(t, n, "the delta entry's failure in status", func(status.Report) bool {
		bad = catalogRows(t, n, "shop.orders")
		d := bad["glue-delta"]
		return !d.InSync && d.LastError != "" && d.Failures > 0 && d.LagSec > 0 && bad["glue"].InSync
	})
	t.Logf("delta entry failing: %+v", bad["glue-delta"])
	fake.Alter("shop", "orders_delta", map[string]string{"table_type": "DELTA"})
	batch()
	wait.Until(t, time.Minute, "the delta entry catches up", func() error {
		if d := catalogRows(t, n, "shop.orders")["glue-delta"]; !d.InSync || d.LastError != "" {
			return fmt.Errorf("status %+v", d)
		}
		return nil
	})
	// The table's delta.checkpoint_interval (2, not the default 10) reached
	// its committer through the node's wiring.
	cp := filepath.Join(strings.TrimPrefix(cfg.Warehouse.Location, "file://"), "shop", "orders", "_delta_log", "00000000000000000002.checkpoint.parquet")
	if _, err := os.Stat(cp); err != nil {
		t.Fatalf("no checkpoint at version 2 with checkpoint_interval 2: %v", err)
	}
}
