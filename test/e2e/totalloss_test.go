//go:build long

package e2e

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/recovery"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestTotalLoss loses every node and every Raft disk at once while records
// keep arriving, and starts a new cluster with --recover: it must restore
// the tables and offsets from the state backup in the warehouse plus the
// tables' own snapshot summaries, which are ahead of the backup by the
// commits made after it. Then every (partition, offset) must be in its
// table exactly once: nothing lost, nothing written twice.
func TestTotalLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end total loss")
	}
	f := newFleet(t)
	first := f.startNew(3, 3, "a", false)
	f.settle(2 * time.Minute)
	p := f.startProducer(3)
	f.waitCommitted(time.Minute)
	w := f.watch(300 * time.Millisecond)

	// Kill about 2.5 s after a backup was written (the interval is 5 s),
	// once the tables committed past it: recovery then needs the summaries.
	var backup *fsm.State
	waitBackup := func(changedFrom uint64) *fsm.State {
		var b *fsm.State
		wait.Until(t, 4*fleetBackupInterval, "a new state backup at "+recovery.BackupLocation(f.wh.Location), func() error {
			var err error
			if b, err = f.readBackup(); err != nil {
				return err
			}
			if b.Applied == changedFrom {
				return fmt.Errorf("still the backup of applied index %d", changedFrom)
			}
			return nil
		})
		return b
	}
	backup = waitBackup(0)
	f.event("state backup found (applied index %d)", backup.Applied)
	var before status.Report // a status that showed the tables ahead of the backup
	for attempt := 0; ; attempt++ {
		backup = waitBackup(backup.Applied)
		// Within half an interval, before the next backup catches up.
		var rep status.Report
		err := wait.Poll(fleetBackupInterval/2, func() error {
			var err error
			if rep, _, err = f.leaderStatus(); err == nil && aheadOf(rep, backup) == 0 {
				err = errors.New("the tables are where the backup is")
			}
			return err
		})
		if err == nil {
			f.event("backup at applied index %d; tables %d offsets ahead of it", backup.Applied, aheadOf(rep, backup))
			before = rep
			break
		}
		if attempt == 5 {
			t.Fatalf("the tables never got ahead of the backup (err %v)", err)
		}
	}
	for _, n := range first {
		f.kill(n)
	}
	f.event("SIGKILLed every node")
	w.stop()
	// The watcher polls every 500 ms and may not have seen the commits the
	// status above showed: both were committed before the loss.
	seen := w.maxCommitted()
	for _, tr := range before.Tables {
		for _, pr := range tr.Partitions {
			if key := fmt.Sprintf("%s|%s/%d", tr.Table, pr.Topic, pr.Partition); pr.Committed > seen[key] {
				seen[key] = pr.Committed
			}
		}
	}
	last, err := f.readBackup() // no node is left to write a newer one
	if err != nil {
		t.Fatal(err)
	}
	ahead := 0
	for key, c := range seen {
		if c > backupCommitted(last, key) {
			ahead++
		}
	}
	f.event("at the loss, %d of %d partitions had committed past the backup (applied index %d)", ahead, len(seen), last.Applied)
	if ahead == 0 {
		t.Errorf("nothing was committed after the last backup: the test did not exercise recovery from the summaries")
	}
	for _, n := range first {
		if err := os.RemoveAll(n.dataDir); err != nil {
			t.Fatal(err)
		}
		f.remove(n)
	}
	f.event("deleted every data dir; starting 3 new nodes with --recover")

	second := f.startNew(3, 3, "b", true)
	rep := firstRecoveredReport(t, f, second)
	var behind []string
	for _, tr := range rep.Tables {
		for _, pr := range tr.Partitions {
			key := fmt.Sprintf("%s|%s/%d", tr.Table, pr.Topic, pr.Partition)
			if pr.Committed < seen[key] {
				behind = append(behind, fmt.Sprintf("%s recovered at %d, %d was committed before the loss", key, pr.Committed, seen[key]))
			}
		}
	}
	if len(behind) > 0 {
		// Recovery may stay one commit behind when the newest metadata is
		// ambiguous (cluster/recovery/walk.go), and says so; otherwise a
		// committed offset was lost.
		ambiguous := false
		for _, n := range second {
			ambiguous = ambiguous || strings.Contains(f.incarnationLog(n), "ambiguous newest metadata")
		}
		if ambiguous {
			t.Logf("recovered behind what was committed (the walk reported ambiguous metadata): %s", strings.Join(behind, "; "))
		} else {
			t.Errorf("recovered behind what was committed:\n%s", strings.Join(behind, "\n"))
		}
	}
	for _, n := range second {
		for _, l := range strings.Split(f.incarnationLog(n), "\n") {
			if strings.Contains(l, "table recovered") || strings.Contains(l, "recovered the state") {
				t.Logf("%s: %s", n.id, l)
			}
		}
	}
	f.settle(2 * time.Minute)
	w2 := f.watch(500 * time.Millisecond)
	w2.waitProgress(2 * time.Minute) // the recovered cluster keeps materializing
	f.verify(p.stop(), 3*time.Minute)
	w2.stop()
}

// firstRecoveredReport polls the new nodes until one serves a report with
// the restored tables, as early as possible: before new commits move the
// offsets, it shows what recovery installed.
func firstRecoveredReport(t *testing.T, f *fleet, ns []*fleetNode) status.Report {
	var rep status.Report
	wait.Until(t, 2*time.Minute, "a recovered node serving the tables", func() error {
		f.checkCrashes()
		for _, n := range ns {
			r, err := f.fetch(n, time.Second)
			if err == nil && len(r.Tables) >= len(f.topics) && r.Problems["cluster"] == "" {
				f.event("%s serves the recovered state", n.id)
				rep = r
				return nil
			}
		}
		return errors.New("none yet")
	})
	return rep
}

// aheadOf counts the partitions whose committed offset in rep is past the
// backup's.
func aheadOf(rep status.Report, b *fsm.State) int {
	c := 0
	for _, tr := range rep.Tables {
		for _, pr := range tr.Partitions {
			if pr.Committed > backupCommitted(b, fmt.Sprintf("%s|%s/%d", tr.Table, pr.Topic, pr.Partition)) {
				c++
			}
		}
	}
	return c
}

// backupCommitted returns the committed offset a backup holds for a
// watcher key ("namespace.table|topic/partition").
func backupCommitted(b *fsm.State, key string) int64 {
	tbl, tp, _ := strings.Cut(key, "|")
	if offs := b.Ledger.Offsets[ledger.TableKey(strings.Split(tbl, "."))]; offs != nil && offs[tp] != nil {
		return offs[tp].Committed
	}
	return 0
}
