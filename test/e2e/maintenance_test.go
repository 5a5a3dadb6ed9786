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

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/proto/admin"
)

// TestMaintenanceOnTheCommitter: with short intervals, the committer deletes
// an orphan data file and an orphan metadata file once they pass the safety
// age, never a referenced file, and expires snapshots beyond the count bound
// while the table keeps every row exactly once.
func TestMaintenanceOnTheCommitter(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "m")})
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "m", Namespace: "e2e", Name: "m"}})
	cfg.CommitInterval = config.Duration(200 * time.Millisecond)
	cfg.Tables[0].SnapshotMaxCount = 3
	cfg.Tables[0].OrphanMinAge = config.Duration(time.Second) // below the 1h floor: tests only
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true,
		ExpireInterval: 300 * time.Millisecond, OrphanInterval: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()

	per := map[int32]int64{}
	for round := range 8 {
		var vals []string
		for i := range 20 {
			vals = append(vals, fmt.Sprintf(`{"r":%d,"i":%d}`, round, i))
		}
		testnode.Produce(t, cl, "m", vals, 2)
		per[0] += 10
		per[1] += 10
		testnode.WaitRows(t, n, "e2e.m", per[0]+per[1], time.Minute)
	}
	tbl, err := n.Catalog().LoadTable(context.Background(), []string{"e2e", "m"})
	if err != nil {
		t.Fatal(err)
	}
	dataDir := strings.TrimPrefix(tbl.Location(), "file://") + "/data"
	metaDir := strings.TrimPrefix(tbl.Location(), "file://") + "/metadata"
	orphanData := filepath.Join(dataDir, "00000-0-deadbeef-dead-4bee-8eef-deadbeefdead-00001.parquet")
	orphanMeta := filepath.Join(metaDir, "99999-deadbeef-dead-4bee-8eef-deadbeefdead.metadata.json")
	for _, p := range []string{orphanData, orphanMeta} {
		if err := os.WriteFile(p, []byte("left by a crashed writer"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The table commits on, as a live one does: cleanup counts a file's age
	// back from the table's last commit by the store's clock too
	// (sinks/iceberg/orphanclock.go), so files written after the last
	// commit wait for the next one.
	wait.For(t, 10*time.Second, "the orphans to age past the 1 s minimum before that commit", func() bool {
		st, err := os.Stat(orphanMeta)
		return err == nil && time.Since(st.ModTime()) > 1100*time.Millisecond
	})
	testnode.Produce(t, cl, "m", []string{`{"r":8,"i":0}`, `{"r":8,"i":1}`}, 2)
	per[0]++
	per[1]++
	testnode.WaitRows(t, n, "e2e.m", per[0]+per[1], time.Minute)
	waitReport(t, n, "orphans deleted and snapshots expired", func(r status.Report) bool {
		tr, _ := tableReport(r, "e2e.m")
		_, e1 := os.Stat(orphanData)
		_, e2 := os.Stat(orphanMeta)
		return os.IsNotExist(e1) && os.IsNotExist(e2) && tr.OrphansDeleted >= 2 && tr.SnapshotsExpired > 0 && tr.Snapshots <= 3
	})
	tbl, err = n.Catalog().LoadTable(context.Background(), []string{"e2e", "m"})
	if err != nil {
		t.Fatal(err)
	}
	testnode.CheckExactlyOnce(t, []*table.Table{tbl}, "m", per)
	if len(tbl.Metadata().Snapshots()) > 3 {
		t.Fatalf("%d snapshots retained", len(tbl.Metadata().Snapshots()))
	}
}

// TestMaintenanceRunOnDemand: with compaction switched off small files pile
// up; maintenance on demand (its HTTP endpoint) refuses such a table
// unless forced, and forced compacts them now.
func TestMaintenanceRunOnDemand(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "md")})
	off := false
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "md", Namespace: "e2e", Name: "md", Compaction: config.Compaction{Enabled: &off}}})
	cfg.CommitInterval = config.Duration(100 * time.Millisecond)
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	per := map[int32]int64{}
	for round := range 8 {
		testnode.Produce(t, cl, "md", []string{fmt.Sprintf(`{"r":%d}`, round), fmt.Sprintf(`{"r":%d}`, round)}, 2)
		per[0]++
		per[1]++
		testnode.WaitRows(t, n, "e2e.md", per[0]+per[1], time.Minute)
	}
	rep, _ := n.Report(context.Background())
	before, _ := tableReport(rep, "e2e.md")
	if before.DataFiles < 8 {
		t.Fatalf("only %d data files before maintenance", before.DataFiles)
	}
	// Compaction is off in the mapping: maintenance is refused, naming
	// the setting and --force, and compacts nothing; forced, it compacts.
	if _, err := admin.RunMaintenance(context.Background(), n.AdminAddr(), "e2e.md", false); err == nil ||
		!strings.Contains(err.Error(), "compaction.enabled is false") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("maintenance of a table with compaction disabled: %v, want a refusal naming the setting and --force", err)
	}
	out, err := admin.RunMaintenance(context.Background(), n.AdminAddr(), "e2e.md", true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"files_rewritten": `+fmt.Sprint(before.DataFiles)) {
		t.Fatalf("maintenance answered %s (had %d files)", out, before.DataFiles)
	}
	rep, _ = n.Report(context.Background())
	after, _ := tableReport(rep, "e2e.md")
	if after.DataFiles != 1 {
		t.Fatalf("%d data files after maintenance", after.DataFiles)
	}
	tbl, err := n.Catalog().LoadTable(context.Background(), []string{"e2e", "md"})
	if err != nil {
		t.Fatal(err)
	}
	testnode.CheckExactlyOnce(t, []*table.Table{tbl}, "md", per)
	if _, err := admin.RunMaintenance(context.Background(), n.AdminAddr(), "e2e.nope", false); err == nil || !strings.Contains(err.Error(), "no mapping writes") {
		t.Fatalf("maintenance of an unknown table: %v", err)
	}
}
