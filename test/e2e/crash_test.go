//go:build long

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"gopkg.in/yaml.v3"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/deltaview"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
)

// TestCrashRecovery runs the real floe binary against a Kafka that lives in
// the test process, SIGKILLs it at random moments five times while records
// keep arriving, and checks at the end that every (partition, offset) is in
// the table exactly once. The table is in formats [iceberg, delta], so the
// kills also land between a Delta version and the Raft entry recording it:
// the Delta view, read by an independent reader, holds the same offsets,
// every one once, with no version or commit sequence skipped or repeated.
// Set FLOE_CRASH_SEED to replay a schedule.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FLOE_CRASH_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = v
	}
	t.Logf("crash schedule seed %d (replay with FLOE_CRASH_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	bin := floeBinary(t)

	const partitions = 6
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(partitions, "crash")}, kgo.DefaultProduceTopic("crash"))

	dir := t.TempDir()
	cfg := testnode.Config(t, dir, kc.ListenAddrs(), []config.Table{{Topic: "crash", Namespace: "e2e", Name: "crash"}})
	cfgPath := filepath.Join(dir, "floe.yaml")
	raw, err := yaml.Marshal(map[string]any{
		"node":            map[string]any{"id": cfg.Node.ID, "data_dir": cfg.Node.DataDir, "raft_addr": cfg.Node.RaftAddr, "admin_addr": cfg.Node.AdminAddr, "rpc_addr": cfg.Node.RPCAddr},
		"kafka":           map[string]any{"bootstrap_servers": cfg.Kafka.BootstrapServers},
		"warehouse":       map[string]any{"location": cfg.Warehouse.Location},
		"commit_interval": "500ms",
		"tables":          []map[string]any{{"topic": "crash", "namespace": "e2e", "name": "crash", "formats": []string{"iceberg", "delta"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}

	// Produce throughout: 40 records per partition every 20 ms.
	var produced [partitions]atomic.Int64
	ctx, stopProducing := context.WithCancel(context.Background())
	prodDone := make(chan error, 1)
	go func() {
		defer close(prodDone)
		for i := 0; ctx.Err() == nil; i++ {
			var recs []*kgo.Record
			for p := range partitions {
				for j := range 40 {
					recs = append(recs, &kgo.Record{Partition: int32(p), Value: []byte(fmt.Sprintf(`{"n":%d,"j":%d,"pad":"%032d"}`, i, j, i))})
				}
			}
			if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
				prodDone <- err
				return
			}
			for p := range partitions {
				produced[p].Add(40)
			}
			time.Sleep(20 * time.Millisecond) // the load's pace (2,000 records/s per partition), not a wait
		}
	}()

	logf, err := os.Create(filepath.Join(dir, "floe.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	t.Cleanup(func() {
		if t.Failed() {
			if data, err := os.ReadFile(logf.Name()); err == nil {
				lines := strings.Split(string(data), "\n")
				t.Logf("last lines of floe.log:\n%s", strings.Join(lines[max(0, len(lines)-80):], "\n"))
			}
		}
	})
	startProc := func() *exec.Cmd {
		cmd := exec.Command(bin, "serve", "--config", cfgPath)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	for kill := 1; kill <= 5; kill++ {
		cmd := startProc()
		wait := time.Duration(500+rng.IntN(3000)) * time.Millisecond
		time.Sleep(wait) // the fault: a SIGKILL at a random moment of the run
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		t.Logf("kill %d after %s", kill, wait)
	}
	stopProducing()
	if err := <-prodDone; err != nil {
		t.Fatal(err)
	}
	var total int64
	per := map[int32]int64{}
	for p := range partitions {
		per[int32(p)] = produced[p].Load()
		total += per[int32(p)]
	}
	t.Logf("produced %d records", total)

	// Final run: wait until everything is committed, read status through
	// the CLI, then stop gracefully.
	cmd := startProc()
	var rep status.Report
	err = wait.Poll(3*time.Minute, func() error {
		out, err := exec.Command(bin, "status", "--admin-addr", cfg.Node.AdminAddr, "-o", "json").Output()
		if err != nil {
			return err
		}
		rep = status.Report{}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("status output: %v\n%s", err, out)
		}
		if len(rep.Tables) == 0 || rep.Tables[0].Rows != total {
			return fmt.Errorf("rows short of %d", total)
		}
		return nil
	})
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("not caught up: %+v (%v)", rep, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("floe serve exited with %v after SIGTERM", err)
	}

	// Independent read: open the node's state from disk, load the table
	// from its metadata pointer and scan it with iceberg-go.
	rn, err := raftnode.Open(raftnode.NodeConfig{ID: cfg.Node.ID, RaftAddr: cfg.Node.RaftAddr, DataDir: cfg.Node.DataDir, BootstrapExpect: 1, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rn.Close()
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rn.WaitLeader(wctx); err != nil {
		t.Fatal(err)
	}
	// A reopened node elects itself before it has applied its log again:
	// the barrier waits until the state holds every entry on disk.
	if err := rn.Sync(wctx); err != nil {
		t.Fatal(err)
	}
	cat := node.NewCatalog(rn, cfg.Warehouse.Location, nil)
	tbl, err := cat.LoadTable(context.Background(), []string{"e2e", "crash"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.MetadataLocation() != rep.Tables[0].MetadataLocation {
		t.Fatalf("status said %s, state says %s", rep.Tables[0].MetadataLocation, tbl.MetadataLocation())
	}
	testnode.CheckExactlyOnce(t, []*table.Table{tbl}, "crash", per)
	checkDeltaView(t, rn, tbl, per)

	// Orphans the SIGKILLs left (files written but never recorded, metadata
	// of commits never applied) go once past the safety age (tiny here);
	// no referenced file does: the table still reads exactly once, and every
	// data file left is one the table references.
	root := strings.TrimPrefix(tbl.Location(), "file://")
	wait.Until(t, 10*time.Second, "every file of the table older than 10 ms", func() error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err == nil && time.Since(info.ModTime()) <= 10*time.Millisecond {
				return fmt.Errorf("%s is younger", p)
			}
			return err
		})
	})
	sink := icebergsink.New(cat, 64<<20, nil, nil)
	sink.SetFence(node.NewFence(rn))
	key := ledger.TableKey([]string{"e2e", "crash"})
	var role ledger.Assignment // the table's committer, as the node left it
	rn.FSM().Read(func(s *fsm.State) { role = s.Committers[key] })
	files, bytes, err := sink.CleanOrphans(context.Background(), key, 10*time.Millisecond, nil, role)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("orphan cleanup after the crashes deleted %d files (%d bytes)", files, bytes)
	tbl, err = cat.LoadTable(context.Background(), []string{"e2e", "crash"})
	if err != nil {
		t.Fatal(err)
	}
	testnode.CheckExactlyOnce(t, []*table.Table{tbl}, "crash", per)
	checkDeltaView(t, rn, tbl, per)
	// Referenced by any retained snapshot, not only the current one: a
	// compaction in the final run leaves the files it replaced to the
	// snapshots before it until they expire, and they are no orphans.
	referenced := map[string]bool{}
	for _, snap := range tbl.Metadata().Snapshots() {
		tasks, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID)).PlanFiles(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			referenced[filepath.Base(task.File.FilePath())] = true
		}
	}
	left, _ := filepath.Glob(filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "data", "*.parquet"))
	for _, f := range left {
		if !referenced[filepath.Base(f)] {
			t.Errorf("unreferenced data file survived orphan cleanup: %s", f)
		}
	}
}

// checkDeltaView reads the table's Delta log as an independent reader:
// versions and commit sequences contiguous, the last sequence the one the
// state recorded, the same floe.offsets as the Iceberg snapshot, and every
// produced offset once in the live files (delta-rs too when set up).
func checkDeltaView(t *testing.T, rn *raftnode.Node, tbl *table.Table, per map[int32]int64) {
	t.Helper()
	root := strings.TrimPrefix(tbl.Location(), "file://")
	v := deltaview.Read(t, root)
	v.CheckContiguous(t)
	var rec *ledger.DeltaCommit
	rn.FSM().Read(func(s *fsm.State) {
		if tt := s.Tables[ledger.TableKey([]string{"e2e", "crash"})]; tt != nil && tt.Delta != nil {
			d := *tt.Delta
			rec = &d
		}
	})
	if rec == nil || rec.Sequence != int64(len(v.Txns)) || rec.Version > v.Versions[len(v.Versions)-1] {
		t.Fatalf("recorded delta commit %+v; the log has %d sequences up to version %d", rec, len(v.Txns), v.Versions[len(v.Versions)-1])
	}
	offs, err := icebergsink.Offsets(tbl.CurrentSnapshot())
	if err != nil || !maps.Equal(offs, v.Offsets) {
		t.Fatalf("iceberg offsets %v (%v), delta offsets %v", offs, err, v.Offsets)
	}
	rows := v.Rows(t, root)
	var total int64
	for p, n := range per {
		for o := range n {
			if c := rows[fmt.Sprintf("%d/%d", p, o)]; c != 1 {
				t.Fatalf("delta view: partition %d offset %d appears %d times", p, o, c)
			}
		}
		total += n
	}
	if int64(len(rows)) != total {
		t.Fatalf("delta view has %d distinct offsets, want %d", len(rows), total)
	}
	if n, distinct, _, ok := deltaview.ReadWithDeltaRS(t, root); ok && (n != total || distinct != total) {
		t.Fatalf("delta-rs read %d rows (%d distinct), want %d", n, distinct, total)
	}
	t.Logf("delta view: %d versions, %d commit sequences, %d offsets once", len(v.Versions), len(v.Txns), total)
}
