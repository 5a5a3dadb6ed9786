package delta

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
)

// publishN publishes sequences from..to, one file each, and returns the
// files' Delta paths.
func publishN(t *testing.T, l *Log, tbl Table, from, to int64) []string {
	t.Helper()
	var paths []string
	for seq := from; seq <= to; seq++ {
		f := dataFile(t, tbl.Location, 1, "eu", seq*10, seq*10+9)
		res, err := l.Publish(context.Background(), appendCommit(tbl, seq, f))
		if err != nil {
			t.Fatalf("sequence %d: %v", seq, err)
		}
		if !res.Published || res.CheckpointErr != nil {
			t.Fatalf("sequence %d: %+v", seq, res)
		}
		p, _ := relPath(tbl.Location, f.Path)
		paths = append(paths, p)
	}
	return paths
}

// TestRecovery reopens a log and finds its version, txn and files, from
// commit files alone and from a checkpoint with the commit files before it
// gone (as log cleanup leaves it).
func TestRecovery(t *testing.T) {
	for _, c := range []struct {
		name         string
		versions     int64 // sequences 1..versions are versions 0..versions-1
		dropBeforeCP bool
		checkpoint   int64 // the checkpoint expected, -1 none
		dropCP       bool  // the checkpoint _last_checkpoint names is gone
	}{
		{"no checkpoint", 7, false, -1, false},
		{"checkpoint at 10", 13, false, 10, false},
		{"checkpoint at 20 only", 24, true, 20, false},
		{"checkpoint at 10 gone", 13, false, 10, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tbl := testTable("file://"+dir, 1)
			l := openLog(t, LocalStore(dir))
			paths := publishN(t, l, tbl, 1, c.versions)
			if c.checkpoint >= 0 {
				if _, err := os.Stat(filepath.Join(dir, checkpointName(c.checkpoint))); err != nil {
					t.Fatalf("no checkpoint: %v", err)
				}
			}
			if c.dropCP {
				if err := os.Remove(filepath.Join(dir, checkpointName(c.checkpoint))); err != nil {
					t.Fatal(err)
				}
			}
			if c.dropBeforeCP {
				for v := int64(0); v < c.checkpoint; v++ {
					if err := os.Remove(filepath.Join(dir, commitName(v))); err != nil {
						t.Fatal(err)
					}
				}
			}
			r := openLog(t, LocalStore(dir))
			if r.Version() != c.versions-1 {
				t.Errorf("version %d, want %d", r.Version(), c.versions-1)
			}
			if txn, ok := r.Txn(tableID); !ok || txn != c.versions {
				t.Errorf("txn %d %v, want %d", txn, ok, c.versions)
			}
			slices.Sort(paths)
			if got := r.Files(); !slices.Equal(got, paths) {
				t.Errorf("files %v, want %v", got, paths)
			}
			if r.snap.metadata.ID != tableID || !slices.Equal(r.snap.metadata.PartitionColumns, []string{"region"}) {
				t.Errorf("metadata %+v", r.snap.metadata)
			}
		})
	}
}

// TestRepublish is the crash between writing NNN.json and recording it:
// a new process publishing the same sequence again.
func TestRepublish(t *testing.T) {
	for _, c := range []struct {
		name      string
		published int64 // sequences 1..published are in the log
		seq       int64
		sameID    bool
		want      error // nil: a no-op returning the version
	}{
		{"same commit", 3, 3, true, nil},
		{"same commit behind a checkpoint", 12, 11, true, ErrSequenceBehind},
		{"same commit at the checkpoint", 11, 11, true, nil},
		{"another commit, same sequence", 3, 3, false, &SequenceConflictError{}},
		{"an older sequence", 3, 2, true, ErrSequenceBehind},
		{"a skipped sequence", 3, 5, true, ErrSequenceGap},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tbl := testTable("file://"+dir, 1)
			l := openLog(t, LocalStore(dir))
			var commits []Commit
			for seq := int64(1); seq <= c.published; seq++ {
				cm := appendCommit(tbl, seq, dataFile(t, tbl.Location, 1, "eu", seq, seq))
				if _, err := l.Publish(context.Background(), cm); err != nil {
					t.Fatal(err)
				}
				commits = append(commits, cm)
			}
			again := appendCommit(tbl, c.seq, dataFile(t, tbl.Location, 1, "eu", 99, 99))
			if c.sameID && c.seq <= c.published {
				again = commits[c.seq-1]
			}
			r := openLog(t, LocalStore(dir)) // the restarted process
			before := r.Version()
			res, err := r.Publish(context.Background(), again)
			var conflict *SequenceConflictError
			switch {
			case c.want == nil:
				if err != nil || res.Published || res.Version != c.seq-1 {
					t.Fatalf("got %+v, %v; want version %d unpublished", res, err, c.seq-1)
				}
			case errors.As(c.want, &conflict):
				if !errors.As(err, &conflict) {
					t.Fatalf("got %v, want a sequence conflict", err)
				}
				held := commits[c.seq-1]
				if conflict.CommitID != held.CommitID || conflict.Version != c.seq-1 || conflict.Offsets["orders/0"] != held.Offsets["orders/0"] ||
					!slices.Equal(conflict.Entries, held.Entries) {
					t.Errorf("conflict %+v, want commit %s at %d", conflict, held.CommitID, c.seq-1)
				}
			default:
				if !errors.Is(err, c.want) {
					t.Fatalf("got %v, want %v", err, c.want)
				}
			}
			if r.Version() != before {
				t.Errorf("version moved from %d to %d", before, r.Version())
			}
			if _, err := os.Stat(filepath.Join(dir, commitName(before+1))); err == nil {
				t.Errorf("version %d was written", before+1)
			}
		})
	}
}

// TestPublishRace: two writers of one log publish the same version; one
// wins, the other gets ErrVersionExists and, having re-read the tail, sees
// the winner's sequence on its retry.
func TestPublishRace(t *testing.T) {
	dir := t.TempDir()
	tbl := testTable("file://"+dir, 1)
	a, b := openLog(t, LocalStore(dir)), openLog(t, LocalStore(dir))
	first := appendCommit(tbl, 1, dataFile(t, tbl.Location, 1, "eu", 1, 1))
	if _, err := a.Publish(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	second := appendCommit(tbl, 1, dataFile(t, tbl.Location, 1, "eu", 2, 2))
	_, err := b.Publish(context.Background(), second)
	if !errors.Is(err, ErrVersionExists) {
		t.Fatalf("got %v, want ErrVersionExists", err)
	}
	var conflict *SequenceConflictError
	if _, err := b.Publish(context.Background(), second); !errors.As(err, &conflict) || conflict.CommitID != first.CommitID {
		t.Fatalf("retry: got %v, want a conflict naming %s", err, first.CommitID)
	}
	res, err := b.Publish(context.Background(), appendCommit(tbl, 2, dataFile(t, tbl.Location, 1, "eu", 3, 3)))
	if err != nil || res.Version != 1 {
		t.Fatalf("next sequence: %+v, %v", res, err)
	}
}

// readVersion returns a version's actions.
func readVersion(t *testing.T, dir string, v int64) []Action {
	t.Helper()
	acts, err := readCommit(context.Background(), LocalStore(dir), v)
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

// TestSchemaEvolution: a new column is a metaData action; a timestamp
// without zone upgrades the protocol; a type change Delta cannot widen is
// refused.
func TestSchemaEvolution(t *testing.T) {
	dir := t.TempDir()
	tbl := testTable("file://"+dir, 0)
	l := openLog(t, LocalStore(dir))
	publish := func(tb Table, seq int64) ([]Action, error) {
		res, err := l.Publish(context.Background(), appendCommit(tb, seq, dataFile(t, tb.Location, 0, "x", seq, seq)))
		if err != nil {
			return nil, err
		}
		return readVersion(t, dir, res.Version), nil
	}
	v0, err := publish(tbl, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p := v0[1].Protocol; p == nil || p.MinReaderVersion != 1 || p.MinWriterVersion != 1 || v0[2].MetaData == nil {
		t.Fatalf("version 0 starts %+v", v0[:3])
	}
	v1, err := publish(tbl, 2)
	if err != nil || len(v1) != 3 || v1[1].Txn == nil || v1[2].Add == nil {
		t.Fatalf("an unchanged schema: %+v, %v", v1, err)
	}
	grown := tbl
	grown.Schema = testSchema(iceberg.NestedField{ID: 20, Name: "note", Type: iceberg.PrimitiveTypes.String})
	v2, err := publish(grown, 3)
	if err != nil || v2[1].MetaData == nil || !strings.Contains(v2[1].MetaData.SchemaString, `"note"`) || v2[1].MetaData.ID != tableID {
		t.Fatalf("a new column: %+v, %v", v2, err)
	}
	ntz := grown
	ntz.Schema = testSchema(iceberg.NestedField{ID: 20, Name: "note", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 21, Name: "local", Type: iceberg.PrimitiveTypes.Timestamp})
	v3, err := publish(ntz, 4)
	if err != nil {
		t.Fatal(err)
	}
	if p := v3[1].Protocol; p == nil || p.MinReaderVersion != 3 || p.MinWriterVersion != 7 ||
		!slices.Equal(p.ReaderFeatures, []string{FeatureTimestampNtz}) || !slices.Equal(p.WriterFeatures, []string{FeatureTimestampNtz}) {
		t.Fatalf("timestamp_ntz protocol: %+v", v3[1])
	}
	promoted := ntz
	promoted.Schema = iceberg.NewSchema(3, append(slices.Clone(ntz.Schema.Fields()[:1]),
		iceberg.NestedField{ID: colRegion, Name: "region", Type: iceberg.PrimitiveTypes.Int64})...)
	if _, err := publish(promoted, 5); !errors.Is(err, ErrUnsupported) ||
		!strings.Contains(err.Error(), "column region changes type from string to long") {
		t.Fatalf("a type change Delta cannot widen: got %v, want ErrUnsupported naming it", err)
	}
}

// TestCompaction: remove + add with dataChange false; a file that is not
// live cannot be compacted away.
func TestCompaction(t *testing.T) {
	dir := t.TempDir()
	tbl := testTable("file://"+dir, 1)
	l := openLog(t, LocalStore(dir))
	a, b := dataFile(t, tbl.Location, 1, "eu", 1, 5), dataFile(t, tbl.Location, 1, "eu", 6, 9)
	if _, err := l.Publish(context.Background(), appendCommit(tbl, 1, a, b)); err != nil {
		t.Fatal(err)
	}
	merged := dataFile(t, tbl.Location, 1, "eu", 1, 9)
	res, err := l.Publish(context.Background(), Commit{Table: tbl, CommitID: "compact-1", Rearrange: true,
		Remove: []File{a, b}, Add: []File{merged}})
	if err != nil {
		t.Fatal(err)
	}
	acts := readVersion(t, dir, res.Version)
	var removes, adds int
	for _, x := range acts {
		switch {
		case x.Remove != nil:
			removes++
			if x.Remove.DataChange || *x.Remove.PartitionValues["region"] != "eu" {
				t.Errorf("remove %+v", x.Remove)
			}
		case x.Add != nil:
			adds++
			if x.Add.DataChange {
				t.Errorf("add %+v", x.Add)
			}
		case x.Txn != nil:
			t.Errorf("a compaction carries a txn: %+v", x.Txn)
		case x.CommitInfo != nil:
			if x.CommitInfo.Operation != "OPTIMIZE" || x.CommitInfo.CommitID != "compact-1" {
				t.Errorf("commitInfo %+v", x.CommitInfo)
			}
		}
	}
	if removes != 2 || adds != 1 || len(l.Files()) != 1 {
		t.Fatalf("%d removes, %d adds, files %v", removes, adds, l.Files())
	}
	_, err = l.Publish(context.Background(), Commit{Table: tbl, CommitID: "compact-2", Rearrange: true,
		Remove: []File{a}, Add: []File{dataFile(t, tbl.Location, 1, "eu", 1, 5)}})
	if !errors.Is(err, ErrInvalidCommit) {
		t.Fatalf("compacting a removed file: got %v, want ErrInvalidCommit", err)
	}
}

// TestCheckpointContent reads a checkpoint back: the same snapshot as the
// commits it covers, and tombstones kept until they expire.
func TestCheckpointContent(t *testing.T) {
	dir := t.TempDir()
	tbl := testTable("file://"+dir, 1)
	l := openLog(t, LocalStore(dir))
	goneFile := dataFile(t, tbl.Location, 1, "eu", 0, 0)
	if _, err := l.Publish(context.Background(), appendCommit(tbl, 1, goneFile)); err != nil {
		t.Fatal(err)
	}
	publishN(t, l, tbl, 2, 5)
	if _, err := l.Publish(context.Background(), Commit{Table: tbl, Sequence: 6, CommitID: "rewind",
		Remove: []File{goneFile}}); err != nil {
		t.Fatal(err)
	}
	data, rows, adds, err := encodeCheckpoint(l.snap, fixedClock()())
	if err != nil {
		t.Fatal(err)
	}
	if rows != 2+1+4+1 || adds != 4 {
		t.Errorf("%d rows (%d adds), want 8 (4)", rows, adds)
	}
	acts, err := decodeCheckpoint(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	s := newSnapshot()
	s.apply(l.snap.version, acts)
	if !slices.Equal(sortedKeys(s.files), l.Files()) || s.txns[tableID] != 6 || len(s.removed) != 1 {
		t.Errorf("checkpoint snapshot: files %v txns %v removed %v", sortedKeys(s.files), s.txns, sortedKeys(s.removed))
	}
	if s.metadata.SchemaString != l.snap.metadata.SchemaString || s.protocol.MinWriterVersion != l.snap.protocol.MinWriterVersion {
		t.Errorf("metadata or protocol differ: %+v %+v", s.metadata, s.protocol)
	}
	for p, a := range l.snap.files {
		if got := s.files[p]; got.Stats != a.Stats || *got.PartitionValues["region"] != "eu" || got.Size != a.Size {
			t.Errorf("file %s: %+v, want %+v", p, got, a)
		}
	}
	later := fixedClock()().Add(tombstoneRetention + time.Second)
	if _, rows, _, _ := encodeCheckpoint(l.snap, later); rows != 7 {
		t.Errorf("an expired tombstone: %d rows, want 7", rows)
	}
}

// TestCorruptTail: a missing version and a malformed commit are errors,
// not a shorter log.
func TestCorruptTail(t *testing.T) {
	for _, c := range []struct {
		name    string
		breakIt func(dir string) error
	}{
		{"missing version", func(dir string) error { return os.Remove(filepath.Join(dir, commitName(1))) }},
		{"malformed commit", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, commitName(2)), []byte("{\"add\":"), 0o644)
		}},
		{"malformed _last_checkpoint", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, lastCheckpointName), []byte("[]"), 0o644)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tbl := testTable("file://"+dir, 1)
			publishN(t, openLog(t, LocalStore(dir)), tbl, 1, 4)
			if err := c.breakIt(dir); err != nil {
				t.Fatal(err)
			}
			if _, err := Open(context.Background(), LocalStore(dir), Options{}); !errors.Is(err, ErrCorruptLog) {
				t.Fatalf("got %v, want ErrCorruptLog", err)
			}
		})
	}
}

func TestParseLogName(t *testing.T) {
	for _, c := range []struct {
		name   string
		v      int64
		cp, ok bool
	}{
		{"00000000000000000010.json", 10, false, true},
		{"00000000000000000010.checkpoint.parquet", 10, true, true},
		{"00000000000000000010.checkpoint.0000000001.0000000002.parquet", 0, false, false},
		{"00000000000000000010.crc", 0, false, false},
		{".00000000000000000010.json.123.tmp", 0, false, false},
		{"_last_checkpoint", 0, false, false},
		{fmt.Sprintf("%020d.json", int64(1)<<62), 1 << 62, false, true},
	} {
		v, cp, ok := parseLogName(c.name)
		if v != c.v || cp != c.cp || ok != c.ok {
			t.Errorf("%s: %d %v %v", c.name, v, cp, ok)
		}
	}
}
