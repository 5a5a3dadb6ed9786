package delta

import (
	"context"
	"slices"
	"testing"
)

// TestSync: a log added to a table with data lists its live files at
// version 0 without a txn; a log that agrees writes nothing; one that
// missed changes gets a version removing what left and adding what came,
// after which the log's live files are the table's again, and the txn of
// the appends before is kept.
func TestSync(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tbl := testTable(dir, 1)
	a, b, c := dataFile(t, dir, 1, "eu", 0, 9), dataFile(t, dir, 1, "us", 10, 19), dataFile(t, dir, 1, "eu", 20, 29)
	l := openLog(t, LocalStore(dir))
	rel := func(fs ...File) []string {
		var out []string
		for _, f := range fs {
			p, err := relPath(dir, f.Path)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
		slices.Sort(out)
		return out
	}
	for i, step := range []struct {
		live      []File
		published bool
		version   int64
	}{
		{[]File{a, b}, true, 0},  // the log added to a table with data
		{[]File{a, b}, false, 0}, // agrees: nothing written
		{[]File{b, c}, true, 1},  // a left (a replace delete), c came
		{[]File{b, c}, false, 1},
	} {
		res, err := l.Sync(ctx, Commit{Table: tbl, CommitID: "sync", Offsets: map[string]int64{"orders/0": 5}}, step.live)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if res.Published != step.published || res.Version != step.version {
			t.Fatalf("step %d: %+v, want published %v at %d", i, res, step.published, step.version)
		}
		if got := l.Files(); !slices.Equal(got, rel(step.live...)) {
			t.Fatalf("step %d: live %v, want %v", i, got, rel(step.live...))
		}
		if _, ok := l.Txn(tbl.ID); ok {
			t.Fatalf("step %d: a sync wrote a txn", i)
		}
	}
	// A reader from scratch sees the same live files; the next append
	// follows the sync.
	if _, err := l.Publish(ctx, appendCommit(tbl, 1, dataFile(t, dir, 1, "us", 30, 39))); err != nil {
		t.Fatal(err)
	}
	again := openLog(t, LocalStore(dir))
	if again.Version() != 2 || len(again.Files()) != 3 {
		t.Fatalf("reopened: version %d, files %v", again.Version(), again.Files())
	}
	if v, ok := again.Txn(tbl.ID); !ok || v != 1 {
		t.Fatalf("txn %d %v", v, ok)
	}
}

// TestSyncRearrange: a sync the caller marks as a rearrangement is an
// OPTIMIZE with dataChange false when the rows agree; the log refuses the
// mark (the version changes data, as an unmarked sync does) when the live
// row count differs or a kept file's DV would change.
func TestSyncRearrange(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		liveRows   int64 // rows of the compacted file
		dataChange bool
		operation  string
	}{
		{"same rows", 20, false, "OPTIMIZE"},
		{"rows added on the way", 25, true, "WRITE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tbl := testTable(dir, 1)
			a, b := dataFile(t, dir, 1, "eu", 0, 9), dataFile(t, dir, 1, "eu", 10, 19)
			l := openLog(t, LocalStore(dir))
			if _, err := l.Publish(ctx, appendCommit(tbl, 1, a, b)); err != nil {
				t.Fatal(err)
			}
			compacted := dataFile(t, dir, 1, "eu", 0, tc.liveRows-1)
			res, err := l.Sync(ctx, Commit{Table: tbl, CommitID: "sync-1", Offsets: map[string]int64{"orders/0": 100}, Rearrange: true},
				[]File{compacted})
			if err != nil || !res.Published {
				t.Fatalf("sync: %+v %v", res, err)
			}
			actions, err := readCommit(ctx, LocalStore(dir), res.Version)
			if err != nil {
				t.Fatal(err)
			}
			files := 0
			for _, act := range actions {
				switch {
				case act.CommitInfo != nil && act.CommitInfo.Operation != tc.operation:
					t.Errorf("operation %q, want %q", act.CommitInfo.Operation, tc.operation)
				case act.Add != nil && act.Add.DataChange != tc.dataChange, act.Remove != nil && act.Remove.DataChange != tc.dataChange:
					t.Errorf("a file action with dataChange %v, want %v", !tc.dataChange, tc.dataChange)
				case act.Txn != nil:
					t.Errorf("a sync wrote a txn")
				}
				if act.Add != nil || act.Remove != nil {
					files++
				}
			}
			if files != 3 {
				t.Fatalf("%d file actions, want 2 removes and 1 add", files)
			}
		})
	}
}
