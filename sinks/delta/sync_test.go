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
