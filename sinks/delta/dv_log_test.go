package delta

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
)

// dvRows reads the rows (below 100) of a live file's DV in the log; nil
// for none.
func dvRows(t *testing.T, l *Log, loc string, f File) []int64 {
	t.Helper()
	rel, err := relPath(loc, f.Path)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := l.snap.files[rel]
	if !ok {
		t.Fatalf("file %s is not live", rel)
	}
	if a.DeletionVector == nil {
		return nil
	}
	rs, err := ReadDV(context.Background(), l.st, a.DeletionVector)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for pos := range int64(100) {
		if rs.Contains(pos) {
			out = append(out, pos)
		}
	}
	return out
}

// TestPublishDeletes: an upsert table's deletes become DVs: a new file's
// own, and for an older file the remove of its logical file and the add
// with the union of its rows, from the log's state, so a reopened log and
// a checkpoint keep them; compaction removes the file with its DV.
func TestPublishDeletes(t *testing.T) {
	ctx := context.Background()
	dir, tbl := dvTable(t)
	l := openLog(t, LocalStore(dir))
	a := dataFile(t, tbl.Location, 0, "eu", 0, 9)
	b := dataFile(t, tbl.Location, 0, "eu", 10, 19)
	if _, err := l.Publish(ctx, appendCommit(tbl, 1, a)); err != nil {
		t.Fatal(err)
	}
	p := l.snap.protocol
	if p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || !slices.Contains(p.ReaderFeatures, featureDV) ||
		!slices.Contains(p.WriterFeatures, featureDV) || l.snap.metadata.Configuration[propEnableDV] != "true" {
		t.Fatalf("protocol %+v, configuration %v", p, l.snap.metadata.Configuration)
	}
	c := appendCommit(tbl, 2, b)
	c.Deletes = map[string][]int64{a.Path: {1, 3}, b.Path: {0}}
	if _, err := l.Publish(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := dvRows(t, l, tbl.Location, a); !slices.Equal(got, []int64{1, 3}) {
		t.Fatalf("a's DV %v", got)
	}
	if got := dvRows(t, l, tbl.Location, b); !slices.Equal(got, []int64{0}) {
		t.Fatalf("b's DV %v", got)
	}
	l = openLog(t, LocalStore(dir)) // the DV so far comes from the log
	c = appendCommit(tbl, 3)
	c.Deletes = map[string][]int64{a.Path: {3, 5}}
	if _, err := l.Publish(ctx, c); err != nil {
		t.Fatal(err)
	}
	acts, err := readCommit(ctx, LocalStore(dir), 2)
	if err != nil {
		t.Fatal(err)
	}
	var rm *Remove
	var add *Add
	var info *CommitInfo
	for _, x := range acts {
		rm, add, info = cmpOr(rm, x.Remove), cmpOr(add, x.Add), cmpOr(info, x.CommitInfo)
	}
	if info == nil || info.IsBlindAppend != nil {
		t.Fatalf("version 2 (no adds): commitInfo %+v", info)
	}
	v1, err := readCommit(ctx, LocalStore(dir), 1)
	if err != nil {
		t.Fatal(err)
	}
	if b := v1[0].CommitInfo.IsBlindAppend; b == nil || *b {
		t.Fatal("version 1 adds a file and deletes rows, yet is not isBlindAppend false")
	}
	if rm == nil || add == nil || rm.DeletionVector == nil || rm.DeletionVector.Cardinality != 2 ||
		add.DeletionVector.Cardinality != 3 || !rm.DataChange || !add.DataChange || add.Stats == "" {
		t.Fatalf("version 2: remove %+v add %+v", rm, add)
	}
	if got := dvRows(t, openLog(t, LocalStore(dir)), tbl.Location, a); !slices.Equal(got, []int64{1, 3, 5}) {
		t.Fatalf("a's DV after a reopen %v", got)
	}
	checkpointKeepsDVs(t, l)
	comp := Commit{Table: tbl, CommitID: "compact", Rearrange: true, Remove: []File{a, b},
		Add: []File{dataFile(t, tbl.Location, 0, "eu", 0, 19)}}
	if _, err := l.Publish(ctx, comp); err != nil {
		t.Fatal(err)
	}
	if len(l.Files()) != 1 {
		t.Fatalf("after compaction: %v", l.Files())
	}
	bad := appendCommit(tbl, 4)
	bad.Deletes = map[string][]int64{a.Path: {7}}
	if _, err := l.Publish(ctx, bad); !errors.Is(err, ErrInvalidCommit) {
		t.Fatalf("rows deleted from a compacted-away file: %v", err)
	}
}

func cmpOr[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// checkpointKeepsDVs writes the log's checkpoint and reads it back: every
// live file keeps its DV.
func checkpointKeepsDVs(t *testing.T, l *Log) {
	t.Helper()
	data, _, _, err := encodeCheckpoint(l.snap, fixedClock()())
	if err != nil {
		t.Fatal(err)
	}
	acts, err := decodeCheckpoint(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	s := newSnapshot()
	s.apply(l.snap.version, acts)
	if !slices.Equal(slices.Sorted(maps.Keys(s.files)), l.Files()) {
		t.Fatalf("checkpoint files %v, want %v", slices.Sorted(maps.Keys(s.files)), l.Files())
	}
	for p, a := range l.snap.files {
		got, want := s.files[p].DeletionVector, a.DeletionVector
		if (got == nil) != (want == nil) || (got != nil && (got.UniqueID() != want.UniqueID() ||
			got.SizeInBytes != want.SizeInBytes || got.Cardinality != want.Cardinality)) {
			t.Fatalf("file %s: DV %+v after the checkpoint, want %+v", p, got, want)
		}
	}
}

// TestSyncSetsDVs: a sync makes each live file's DV exactly the rows the
// table deletes from it, and an append table refuses deletes.
func TestSyncSetsDVs(t *testing.T) {
	ctx := context.Background()
	dir, tbl := dvTable(t)
	l := openLog(t, LocalStore(dir))
	a := dataFile(t, tbl.Location, 0, "eu", 0, 9)
	b := dataFile(t, tbl.Location, 0, "eu", 10, 19)
	c := Commit{Table: tbl, CommitID: "s1", Deletes: map[string][]int64{a.Path: {2}}}
	if _, err := l.Sync(ctx, c, []File{a, b}); err != nil {
		t.Fatal(err)
	}
	if got := dvRows(t, l, tbl.Location, a); !slices.Equal(got, []int64{2}) {
		t.Fatalf("a's DV %v", got)
	}
	c = Commit{Table: tbl, CommitID: "s2", Deletes: map[string][]int64{b.Path: {4}}}
	res, err := l.Sync(ctx, c, []File{a, b})
	if err != nil || !res.Published {
		t.Fatalf("sync: %+v %v", res, err)
	}
	if got, gotB := dvRows(t, l, tbl.Location, a), dvRows(t, l, tbl.Location, b); got != nil || !slices.Equal(gotB, []int64{4}) {
		t.Fatalf("DVs a %v b %v", got, gotB)
	}
	if res, err := l.Sync(ctx, c, []File{a, b}); err != nil || res.Published {
		t.Fatalf("a sync with nothing to change: %+v %v", res, err)
	}
	plain := testTable("file://"+t.TempDir(), 0)
	pl := openLog(t, LocalStore(t.TempDir()))
	bad := appendCommit(plain, 1, dataFile(t, plain.Location, 0, "eu", 0, 1))
	bad.Deletes = map[string][]int64{bad.Add[0].Path: {0}}
	if _, err := pl.Publish(ctx, bad); !errors.Is(err, ErrInvalidCommit) {
		t.Fatalf("deletes on an append table: %v", err)
	}
}
