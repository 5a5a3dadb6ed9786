package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/cluster/recovery"
	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestNewClusterOverOldBackup: a node whose Raft disk is gone must not start
// a new, empty cluster over a warehouse that holds an earlier cluster's
// backup (it would recreate the tables from scratch and overwrite the
// backup); --recover restores the tables, and ingestion resumes exactly once.
func TestNewClusterOverOldBackup(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "guard")})
	dir := t.TempDir()
	cfg := testnode.Config(t, dir, kc.ListenAddrs(), []config.Table{{Topic: "guard", Namespace: "e2e", Name: "guard"}})
	cfg.Cluster.BackupInterval = config.Duration(time.Second)
	values := make([]string, 400)
	for i := range values {
		values[i] = fmt.Sprintf(`{"i":%d}`, i)
	}
	testnode.Produce(t, cl, "guard", values[:200], 2)
	ctx := context.Background()
	n, err := testnode.Start(ctx, cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	testnode.WaitRows(t, n, "e2e.guard", 200, time.Minute)
	// At least one backup after the commit, so the next start finds the
	// table in it.
	wait.Until(t, time.Minute, "a state backup holding the commit", func() error {
		st, err := recovery.ReadBackup(ctx, cfg.Warehouse.Location, node.IOProps(cfg.Warehouse))
		if err != nil {
			return err
		}
		if tb := st.Tables[ledger.TableKey([]string{"e2e", "guard"})]; tb == nil || tb.Rows != 200 {
			return fmt.Errorf("backup holds %+v", tb)
		}
		return nil
	})
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(cfg.Node.DataDir); err != nil {
		t.Fatal(err)
	}

	_, err = testnode.Start(ctx, cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	var ce *node.ConfigError
	if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), "--recover") {
		t.Fatalf("start over an old backup without --recover: %v; want a configuration error naming --recover", err)
	}
	if err := os.RemoveAll(cfg.Node.DataDir); err != nil {
		t.Fatal(err)
	}

	testnode.Produce(t, cl, "guard", values[200:], 2)
	n, err = testnode.Start(ctx, cfg, testnode.Logger(t), testnode.Options{NoSync: true, Recover: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	testnode.WaitRows(t, n, "e2e.guard", 400, time.Minute)
	tbl, err := n.Catalog().LoadTable(ctx, []string{"e2e", "guard"})
	if err != nil {
		t.Fatal(err)
	}
	testnode.CheckExactlyOnce(t, []*table.Table{tbl}, "guard", map[int32]int64{0: 200, 1: 200})
}
