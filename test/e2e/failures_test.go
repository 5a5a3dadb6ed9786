package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/embedded"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
)

func waitReport(t *testing.T, n *node.Node, what string, cond func(status.Report) bool) status.Report {
	t.Helper()
	var rep status.Report
	wait.Until(t, time.Minute, what, func() error {
		var err error
		if rep, err = n.Report(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !cond(rep) {
			return fmt.Errorf("%+v", rep)
		}
		return nil
	})
	return rep
}

func tableReport(rep status.Report, name string) (status.TableReport, bool) {
	for _, t := range rep.Tables {
		if t.Table == name {
			return t, true
		}
	}
	return status.TableReport{}, false
}

// TestUnreachableBrokerShown: a node whose broker is down keeps running,
// says why in status, and does not crash-loop.
func TestUnreachableBrokerShown(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	dead, err := embedded.FreeAddr() // nothing listens here
	if err != nil {
		t.Fatal(err)
	}
	cfg := testnode.Config(t, t.TempDir(), []string{dead}, []config.Table{{Topic: "orders", Namespace: "e2e", Name: "orders"}})
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	waitReport(t, n, "kafka problem in status", func(r status.Report) bool {
		tr, ok := tableReport(r, "e2e.orders")
		return strings.Contains(r.Problems["kafka"], dead) && ok && tr.State == "DEGRADED" && strings.Contains(tr.Reason, "kafka")
	})
}

// TestUnwritableWarehouseShownAndRecovered: writes fail while the warehouse
// cannot be created, the table is DEGRADED with the reason, and once the
// obstacle is gone everything is committed exactly once.
func TestUnwritableWarehouseShownAndRecovered(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "orders")})
	var vals []string
	for i := range 400 {
		vals = append(vals, fmt.Sprintf(`{"i":%d}`, i))
	}
	testnode.Produce(t, cl, "orders", vals, 2)

	dir := t.TempDir()
	blocker := filepath.Join(dir, "blocker")
	if err := os.WriteFile(blocker, []byte("a file where a directory should be"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testnode.Config(t, dir, kc.ListenAddrs(), []config.Table{{Topic: "orders", Namespace: "e2e", Name: "orders"}})
	cfg.Warehouse.Location = "file://" + filepath.Join(blocker, "warehouse")
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	// Said at start, naming the field, before any table writes.
	if r, err := n.Report(context.Background()); err != nil || !strings.Contains(r.Problems["warehouse"], "warehouse.location") {
		t.Fatalf("no warehouse problem at start: %v %v", r.Problems, err)
	}
	waitReport(t, n, "storage problem in status", func(r status.Report) bool {
		tr, ok := tableReport(r, "e2e.orders")
		return ok && tr.State == "DEGRADED" && strings.Contains(tr.Reason, "not a directory")
	})
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	testnode.WaitRows(t, n, "e2e.orders", 400, time.Minute)
	tbl, err := n.Catalog().LoadTable(context.Background(), []string{"e2e", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	testnode.CheckExactlyOnce(t, []*table.Table{tbl}, "orders", map[int32]int64{0: 200, 1: 200})
	waitReport(t, n, "running again", func(r status.Report) bool {
		tr, _ := tableReport(r, "e2e.orders")
		return tr.State == "RUNNING" && tr.Reason == "" && r.Problems["warehouse"] == ""
	})
}
