package iceberg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/testing/deltaview"
	"github.com/floe-io/floe/sinks/delta"
	"github.com/floe-io/floe/sinks/sink"
)

// TestDeltaFollowsCompactionAndOrphanCleanup: a compaction of an [iceberg,
// delta] table reaches the Delta log as removes and adds with dataChange
// false, every offset still once; after Iceberg expired the snapshots that
// held the compacted files, orphan cleanup keeps them while the Delta log
// still references them (its tombstones), and never deletes the log.
func TestDeltaFollowsCompactionAndOrphanCleanup(t *testing.T) {
	c := newDeltaCase(t, true)
	for range 6 {
		c.record(2)
		if err := c.commit(); err != nil {
			t.Fatal(err)
		}
	}
	before := deltaview.Read(t, c.root())
	rw, err := c.s.PlanRewrite(c.ctx, c.spec.Key, sink.CompactionPolicy{TargetFileSize: 64 << 20, MinInputFiles: 2,
		HotMinInputFiles: 2, MaxBytes: 1 << 30})
	if err != nil || rw == nil || rw.Stats().FilesBefore < 2 {
		t.Fatalf("planning a compaction: %v (%+v)", err, rw)
	}
	if err := c.s.CommitRewrite(c.ctx, c.spec.Key, rw, c.a, time.Now()); err != nil {
		t.Fatal(err)
	}
	after := c.check()
	rearranged := after.Changes[len(before.Changes):]
	if len(after.Versions) != len(before.Versions)+1 || len(rearranged) != rw.Stats().FilesBefore+rw.Stats().FilesAfter {
		t.Fatalf("compaction: %d versions then %d, %d file actions, want %d", len(before.Versions), len(after.Versions),
			len(rearranged), rw.Stats().FilesBefore+rw.Stats().FilesAfter)
	}
	for _, change := range rearranged {
		if change {
			t.Fatalf("a compaction's file action has dataChange true: %v", rearranged)
		}
	}
	if len(after.Live) != rw.Stats().FilesAfter {
		t.Fatalf("live files %d, want the %d compacted", len(after.Live), rw.Stats().FilesAfter)
	}

	// Iceberg forgets the compacted files; the Delta log still names them.
	if _, err := c.s.Expire(c.ctx, c.spec.Key, time.Millisecond, 1, time.Now().Add(time.Hour), c.a); err != nil {
		t.Fatal(err)
	}
	olderThanAll(t, 10*time.Millisecond, c.root()) // the files' age past the 10 ms minimum
	if _, _, err := c.s.CleanOrphans(c.ctx, c.spec.Key, 10*time.Millisecond, nil, c.a); err != nil {
		t.Fatal(err)
	}
	root := c.root()
	for rel := range before.Live {
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			t.Fatalf("a file the delta log still references was deleted: %v", err)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(root, "_delta_log", "*.json"))
	if len(logs) != len(after.Versions) {
		t.Fatalf("delta log files %d, want %d", len(logs), len(after.Versions))
	}
	c.check()
}

// TestDeltaSchemaGrowth: a column the committer adds to the Iceberg table
// (a schema request) reaches the Delta log as a metaData action with the
// next commit, and rows of both shapes are read once.
func TestDeltaSchemaGrowth(t *testing.T) {
	c := newDeltaCase(t, true)
	c.spec = sink.TableSpec{Key: ledger.TableKey([]string{"db", "grown"}), Ident: []string{"db", "grown"}, Format: "json"}
	committer(t, c.rn, c.spec.Key)
	long := &records.Shape{Kind: records.Long}
	one := &records.Shape{Kind: records.Struct, Fields: []*records.Field{{Name: "a", Shape: long}}}
	if err := c.s.Prepare(c.ctx, c.spec, one); err != nil {
		t.Fatal(err)
	}
	c.record(3)
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	first := deltaview.Read(t, c.root())
	if len(first.Schemas) != 1 || strings.Contains(first.Schemas[0], `"name":"b"`) {
		t.Fatalf("first schema %v", first.Schemas)
	}
	two := one.Clone()
	two.MarkCommitted()
	two.Fields = append(two.Fields, &records.Field{Name: "b", Shape: &records.Shape{Kind: records.String}})
	if err := c.s.EvolveSchema(c.ctx, c.spec, two, c.a, time.Now()); err != nil {
		t.Fatal(err)
	}
	c.record(2)
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	v := c.check()
	if len(v.Schemas) != 2 || !strings.Contains(v.Schemas[1], `"name":"b"`) {
		t.Fatalf("schemas after growth: %v", v.Schemas)
	}
}

// TestDeltaTypeWidening: a column the committer promotes from int to long
// (a registry's compatible evolution) reaches the Delta log as a version
// with the typeWidening feature and the change in the column's
// delta.typeChanges, and rows of both types are read once, as longs. A log
// started after the promotion (delta turned on later) records the change
// in its version 0, from the Iceberg table's schemas.
func TestDeltaTypeWidening(t *testing.T) {
	for _, fromStart := range []bool{true, false} {
		t.Run(fmt.Sprintf("delta from the start %v", fromStart), func(t *testing.T) {
			c := newDeltaCase(t, fromStart)
			c.spec = sink.TableSpec{Key: ledger.TableKey([]string{"db", "widened"}), Ident: []string{"db", "widened"}, Format: "json"}
			committer(t, c.rn, c.spec.Key)
			one := &records.Shape{Kind: records.Struct, Fields: []*records.Field{{Name: "a", Shape: &records.Shape{Kind: records.Int}}}}
			if err := c.s.Prepare(c.ctx, c.spec, one); err != nil {
				t.Fatal(err)
			}
			c.record(3)
			if err := c.commit(); err != nil {
				t.Fatal(err)
			}
			if before := deltaview.Read(t, c.root()); fromStart && (len(before.Schemas) != 1 ||
				!strings.Contains(before.Schemas[0], `"name":"a","type":"integer"`) || len(before.Features) != 0) {
				t.Fatalf("first schema %v, features %v", before.Schemas, before.Features)
			}
			two := one.Clone()
			two.MarkCommitted()
			two.Fields[0].Shape, two.Fields[0].Committed = &records.Shape{Kind: records.Long}, false
			if err := c.s.EvolveSchema(c.ctx, c.spec, two, c.a, time.Now()); err != nil {
				t.Fatal(err)
			}
			c.writes.Store(true)
			c.record(2)
			if err := c.commit(); err != nil {
				t.Fatal(err)
			}
			checkWidened(t, c)
		})
	}
}

// checkWidened reads the table of TestDeltaTypeWidening: two versions,
// the newest schema with a as a long widened from integer, typeWidening
// in the protocol, and every row's a, with the Go replay and delta-rs.
func checkWidened(t *testing.T, c *deltaCase) {
	// delta-rs reads the widened table below, by the column's values.
	py := os.Getenv("FLOE_DELTA_PYTHON")
	t.Setenv("FLOE_DELTA_PYTHON", "")
	v := c.check()
	t.Setenv("FLOE_DELTA_PYTHON", py)
	if len(v.Versions) != 2 || !strings.Contains(v.Schemas[len(v.Schemas)-1],
		`{"name":"a","type":"long","nullable":true,"metadata":{"delta.typeChanges":[{"fromType":"integer","toType":"long"}]}}`) {
		t.Fatalf("versions %v, schemas after the widening: %v", v.Versions, v.Schemas)
	}
	if !slices.Equal(v.Features, []string{"typeWidening"}) || v.Configuration["delta.enableTypeWidening"] != "true" {
		t.Fatalf("protocol features %v, configuration %v", v.Features, v.Configuration)
	}
	checkLongs := func(reader string, a map[string]int64) {
		t.Helper()
		for o := range c.next {
			if got, ok := a[fmt.Sprintf("0/%d", o)]; !ok || got != o {
				t.Fatalf("%s: offset %d: a is %d (%v), want %d", reader, o, got, ok, o)
			}
		}
	}
	checkLongs("the go replay", v.Longs(t, c.root(), "a"))
	a, typ, refused, ok := deltaview.LongsWithDeltaRS(t, c.root(), "a")
	switch {
	case !ok:
	case refused != "" && strings.Contains(refused, "typeWidening"):
		// deltalake 1.6.6 reads no table with the typeWidening reader
		// feature (docs/formats.md); a later one that does is checked.
		t.Logf("delta-rs refuses the widened table: %s", refused)
	case refused != "":
		t.Fatalf("delta-rs: %s", refused)
	case typ != "int64":
		t.Fatalf("delta-rs reads a as %s", typ)
	default:
		checkLongs("delta-rs", a)
	}
}

// TestDeltaLogDeletedByHand: a Delta log an operator deleted is rebuilt
// at the next commit from the Iceberg table (version 0 listing its files)
// and the commit follows as the next sequence, every offset once.
func TestDeltaLogDeletedByHand(t *testing.T) {
	c := newDeltaCase(t, true)
	for range 3 {
		c.record(2)
		if err := c.commit(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(c.root(), "_delta_log")); err != nil {
		t.Fatal(err)
	}
	c.restart()
	c.record(1)
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	v := deltaview.Read(t, c.root())
	if len(v.Versions) != 2 || len(v.Txns) != 1 || v.Txns[0] != 4 {
		t.Fatalf("rebuilt log: versions %v, txns %v; want a sync at 0 and sequence 4 at 1", v.Versions, v.Txns)
	}
	rows := v.Rows(t, c.root())
	for o := range c.next {
		if rows[fmt.Sprintf("0/%d", o)] != 1 {
			t.Fatalf("offset %d: %d times in the rebuilt log", o, rows[fmt.Sprintf("0/%d", o)])
		}
	}
}

// TestDeltaLogCleanup: orphan cleanup also deletes the Delta log entries
// past the retention, keeping the checkpoint (version 10) and what
// follows; the table still reads every offset once from there.
func TestDeltaLogCleanup(t *testing.T) {
	c := newDeltaCase(t, true)
	for range 12 {
		c.record(1)
		if err := c.commit(); err != nil {
			t.Fatal(err)
		}
	}
	c.settings.Store(&delta.Settings{LogRetention: time.Millisecond})
	time.Sleep(10 * time.Millisecond) // the versions' age past the 1 ms retention, not a wait
	if _, _, err := c.s.CleanOrphans(c.ctx, c.spec.Key, time.Hour, nil, c.a); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(c.root(), "_delta_log", "*.json"))
	if len(logs) != 2 || filepath.Base(logs[0]) != "00000000000000000010.json" {
		t.Fatalf("log files after cleanup: %v, want versions 10 and 11", logs)
	}
	c.restart()
	if l := readLog(t, c.table().Location(), nil); l.Version() != 11 || len(l.Files()) != 12 {
		t.Fatalf("reading from the checkpoint: version %d, %d files; want 11, 12", l.Version(), len(l.Files()))
	}
	if n, distinct, _, ok := deltaview.ReadWithDeltaRS(t, c.root()); ok && (n != c.next || distinct != c.next) {
		t.Fatalf("delta-rs read %d rows (%d distinct) from the checkpoint, want %d", n, distinct, c.next)
	}
}

// TestDeltaVersionOfAStaleCommitter: a committer that loses its role
// between publishing its Delta version and its Raft entry is refused as
// stale; its successor finds the version in the log and commits it (the
// same entries and commit id) instead of writing the sequence again.
func TestDeltaVersionOfAStaleCommitter(t *testing.T) {
	c := newDeltaCase(t, true)
	c.record(3)
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	next := ledger.Assignment{Node: "n1", Epoch: 2}
	c.f.published = func(string, int64) error {
		_, err := c.rn.Apply(c.ctx, fsm.Assign{Committers: []fsm.CommitterAssignment{{Table: c.spec.Key, Assignment: next}}})
		return err
	}
	c.record(2)
	if err := c.commit(); !errors.Is(err, ledger.ErrStaleCommitter) {
		t.Fatalf("the stale committer's commit: %v", err)
	}
	before := deltaview.Read(t, c.root())
	c.restart() // the successor: a sink with nothing in memory
	c.a = next
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	v := c.check()
	if len(v.Versions) != len(before.Versions) || len(v.Txns) != 2 {
		t.Fatalf("versions %v after the successor's commit, %v before; txns %v", v.Versions, before.Versions, v.Txns)
	}
}
