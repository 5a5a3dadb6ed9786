package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/embedded"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/wait"
)

func waitReport(t *testing.T, n *floeNode, what string, cond func(status.Report) bool) status.Report {
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
	cfg := testConfig(t, t.TempDir(), []string{dead}, []config.Table{{Topic: "orders", Namespace: "e2e", Name: "orders"}})
	n, err := startNode(context.Background(), cfg, testLogger(t), true)
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
	kc, cl := testKafka(t, []kfake.Opt{kfake.SeedTopics(2, "orders")})
	var vals []string
	for i := range 400 {
		vals = append(vals, fmt.Sprintf(`{"i":%d}`, i))
	}
	produce(t, cl, "orders", vals, 2)

	dir := t.TempDir()
	blocker := filepath.Join(dir, "blocker")
	if err := os.WriteFile(blocker, []byte("a file where a directory should be"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, dir, kc.ListenAddrs(), []config.Table{{Topic: "orders", Namespace: "e2e", Name: "orders"}})
	cfg.Warehouse.Location = "file://" + filepath.Join(blocker, "warehouse")
	n, err := startNode(context.Background(), cfg, testLogger(t), true)
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
	waitRows(t, n, "e2e.orders", 400, time.Minute)
	tbl, err := n.Catalog().LoadTable(context.Background(), []string{"e2e", "orders"})
	if err != nil {
		t.Fatal(err)
	}
	checkExactlyOnce(t, []*table.Table{tbl}, "orders", map[int32]int64{0: 200, 1: 200})
	waitReport(t, n, "running again", func(r status.Report) bool {
		tr, _ := tableReport(r, "e2e.orders")
		return tr.State == "RUNNING" && tr.Reason == "" && r.Problems["warehouse"] == ""
	})
}

// TestServeRefusesBadConfig runs the binary with an invalid config: it must
// stop at once with exit code 2 and name the field.
func TestServeRefusesBadConfig(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	path := filepath.Join(t.TempDir(), "floe.yaml")
	if err := os.WriteFile(path, []byte("kafka: {bootstrap_servers: [nohost]}\ncommit_interval: 1ms\ntables: [{topic: a, error_mode: ignore}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := floeCommand("serve", "--config", path).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitConfig {
		t.Fatalf("exit %v, want code %d; output:\n%s", err, exitConfig, out)
	}
	for _, field := range []string{"kafka.bootstrap_servers[0]", "commit_interval", "tables[0].error_mode"} {
		if !strings.Contains(string(out), field) {
			t.Errorf("output does not name %s:\n%s", field, out)
		}
	}
	// FLOE_ variables override the file and are validated the same way.
	cmd := floeCommand("serve", "--config", path)
	cmd.Env = append(cmd.Env, "FLOE_COMMIT_INTERVAL=never")
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "commit_interval (from FLOE_COMMIT_INTERVAL)") {
		t.Errorf("env error does not name the field:\n%s", out)
	}
}
