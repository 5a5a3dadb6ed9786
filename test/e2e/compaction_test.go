package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
)

// TestCompactionWithConcurrentAppends: 100 ms commits on 4 partitions make
// many small files while compaction runs in the background; appends never
// fail, nothing is lost or duplicated, and once the table cools the data
// file count is back under a small bound (one compacted file plus fewer than
// min_input_files newer ones). Time travel to a snapshot from before a
// compaction returns exactly that snapshot's rows.
func TestCompactionWithConcurrentAppends(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(4, "c")}, kgo.DefaultProduceTopic("c"))
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "c", Namespace: "e2e", Name: "c",
		Compaction: config.Compaction{MinInputFiles: 5, HotMinInputFiles: 8, CoolDown: config.Duration(time.Second), Interval: config.Duration(300 * time.Millisecond)}}})
	cfg.CommitInterval = config.Duration(100 * time.Millisecond)
	cfg.Tables[0].SnapshotMaxCount = 1000
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()

	var produced [4]atomic.Int64
	deadline := time.Now().Add(8 * time.Second)
	var oldSnap *table.Snapshot
	pace := time.NewTicker(50 * time.Millisecond) // appends keep coming while compaction runs
	defer pace.Stop()
	for i := 0; time.Now().Before(deadline); i++ {
		var recs []*kgo.Record
		for p := range 4 {
			for j := range 25 {
				recs = append(recs, &kgo.Record{Partition: int32(p), Value: []byte(fmt.Sprintf(`{"i":%d,"j":%d}`, i, j))})
			}
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		for p := range 4 {
			produced[p].Add(25)
		}
		if oldSnap == nil && i >= 10 { // the first snapshot after the tenth batch: under load the first commit can come later
			if tbl, err := n.Catalog().LoadTable(context.Background(), []string{"e2e", "c"}); err == nil {
				oldSnap = tbl.CurrentSnapshot()
			}
		}
		<-pace.C
	}
	per := map[int32]int64{}
	var total int64
	for p := range 4 {
		per[int32(p)] = produced[p].Load()
		total += per[int32(p)]
	}
	testnode.WaitRows(t, n, "e2e.c", total, time.Minute)
	rep := waitReport(t, n, "compacted and cooled", func(r status.Report) bool {
		tr, _ := tableReport(r, "e2e.c")
		return tr.Compactions >= 2 && tr.DataFiles <= 5
	})
	tr, _ := tableReport(rep, "e2e.c")
	t.Logf("after %d commits: %d data files (avg %d bytes), %d compactions rewrote %d files", tr.Commits, tr.DataFiles, tr.AvgFileBytes, tr.Compactions, tr.FilesRewritten)
	if tr.CommitFailures != 0 {
		t.Fatalf("%d append commits failed while compaction ran", tr.CommitFailures)
	}
	tbl, err := n.Catalog().LoadTable(context.Background(), []string{"e2e", "c"})
	if err != nil {
		t.Fatal(err)
	}
	testnode.CheckExactlyOnce(t, []*table.Table{tbl}, "c", per)
	checkCostCounters(t, n, "e2e.c")
	offs, err := icebergsink.Offsets(tbl.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range per {
		if offs[fmt.Sprintf("c/%d", p)] != want {
			t.Fatalf("current snapshot floe.offsets %v, produced %v", offs, per)
		}
	}
	if oldSnap == nil {
		t.Fatal("no early snapshot captured")
	}
	oldOffs, err := icebergsink.Offsets(oldSnap)
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, o := range oldOffs {
		want += o
	}
	old, err := tbl.Scan(table.WithSnapshotID(oldSnap.SnapshotID), table.WithSelectedFields(icebergsink.ColOffset)).ToArrowTable(context.Background())
	if err != nil {
		t.Fatalf("time travel to snapshot %d: %v", oldSnap.SnapshotID, err)
	}
	defer old.Release()
	if old.NumRows() != want {
		t.Fatalf("snapshot %d holds %d rows, its floe.offsets say %d", oldSnap.SnapshotID, old.NumRows(), want)
	}
}

// checkCostCounters: the node's cost counters add up to what the table
// says it holds: bytes written equal the sizes of the data files its
// appends added, compaction bytes the sizes of the files its rewrites
// replaced (snapshot summaries, read independently of the counters). A
// compaction may land between reading the two, so they are read until they
// agree.
func checkCostCounters(t *testing.T, n *node.Node, name string) {
	t.Helper()
	wait.Until(t, 30*time.Second, "cost counters equal to the snapshot summaries", func() error {
		rep, err := n.Report(context.Background())
		if err != nil {
			return err
		}
		tr, _ := tableReport(rep, name)
		tbl, err := n.Catalog().LoadTable(context.Background(), strings.Split(name, "."))
		if err != nil {
			return err
		}
		added, rewritten := summedSizes(tbl)
		if tr.BytesWritten != added || tr.BytesRewritten != rewritten || added == 0 || rewritten == 0 {
			return fmt.Errorf("bytes written %d (appends added %d), bytes rewritten %d (rewrites removed %d)", tr.BytesWritten, added, tr.BytesRewritten, rewritten)
		}
		return nil
	})
}

// summedSizes sums the data file sizes appends added and rewrites removed,
// over every snapshot of the table.
func summedSizes(tbl *table.Table) (added, rewritten int64) {
	for _, sn := range tbl.Metadata().Snapshots() {
		if sn.Summary == nil {
			continue
		}
		size := func(k string) int64 {
			v, _ := strconv.ParseInt(sn.Summary.Properties[k], 10, 64)
			return v
		}
		switch sn.Summary.Operation {
		case table.OpAppend:
			added += size("added-files-size")
		case table.OpReplace:
			rewritten += size("removed-files-size")
		}
	}
	return added, rewritten
}
