package delta

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

// followTables is the node's Tables: every table writes delta unless off,
// and recorded is what the replicated state last recorded.
type followTables struct {
	off      bool
	recorded map[string]ledger.DeltaCommit
}

func (f *followTables) WritesDelta(string) bool { return !f.off }
func (f *followTables) DeltaRecorded(key string) (ledger.DeltaCommit, bool) {
	c, ok := f.recorded[key]
	return c, ok
}
func (f *followTables) DeltaSettings(string) Settings { return Settings{} }

// followedStub is a table as the Iceberg sink hands it over: a real
// iceberg-go table with no snapshot yet, and what the sink would compute.
type followedStub struct {
	key     string
	tbl     *table.Table
	offsets map[string]int64
	fenced  *int
	fence   error
}

func (t followedStub) Key() string                        { return t.key }
func (t followedStub) Table() *table.Table                { return t.tbl }
func (t followedStub) Upsert() bool                       { return false }
func (t followedStub) Offsets() (map[string]int64, error) { return maps.Clone(t.offsets), nil }
func (t followedStub) LiveFiles(context.Context) ([]ledger.FileDescriptor, error) {
	return nil, nil
}
func (t followedStub) DeletedRows(context.Context) (map[string][]int64, error) { return nil, nil }
func (t followedStub) RearrangedSince(string) bool                             { return false }
func (t followedStub) Fence(context.Context) error {
	*t.fenced++
	return t.fence
}

func newFollowed(t *testing.T, dir string) followedStub {
	t.Helper()
	meta, err := table.NewMetadata(testSchema(), iceberg.UnpartitionedSpec, table.UnsortedSortOrder, dir, iceberg.Properties{})
	if err != nil {
		t.Fatal(err)
	}
	tbl := table.New([]string{"shop", "orders"}, meta, dir+"/metadata/v1.metadata.json", nil, nil)
	return followedStub{key: ledger.TableKey([]string{"shop", "orders"}), tbl: tbl, offsets: map[string]int64{}, fenced: new(int)}
}

// TestFollowerOverTheContract: the Follower works from sink.FollowedTable
// alone. Publish takes the sequence after the recorded one and returns
// what the entry records; the same commit again writes nothing; another
// commit under a published sequence is a *sink.FollowerConflict naming
// what the log holds; a compaction of a log this process never opened is
// left to the next open; a forgotten log is read again, behind the fence.
func TestFollowerOverTheContract(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tables := &followTables{recorded: map[string]ledger.DeltaCommit{}}
	f := NewFollower(tables, nil, Options{}, nil)
	ft := newFollowed(t, dir)
	at := time.UnixMilli(1_700_000_000_000)
	file := dataFile(t, dir, 0, "eu", 0, 9)
	app := sink.FollowedAppend{CommitID: "c1", Offsets: map[string]int64{"t/0": 10}, Entries: []string{"e1"}, At: at,
		Files: []sink.FollowedFile{{FileDescriptor: file.FileDescriptor, WrittenAt: at.UnixMilli()}}}

	if err := f.Rearrange(ctx, ft, sink.FollowedRewrite{CommitID: "x", At: at}); err != nil {
		t.Fatalf("a compaction of a log not open: %v", err)
	}
	rec, err := f.Publish(ctx, ft, app)
	if err != nil || rec != (ledger.DeltaCommit{Sequence: 1, Version: 0}) {
		t.Fatalf("Publish = %+v, %v; want sequence 1 at version 0", rec, err)
	}
	if *ft.fenced != 1 {
		t.Fatalf("opening the log passed the fence %d times, want 1", *ft.fenced)
	}
	if again, err := f.Publish(ctx, ft, app); err != nil || again != rec {
		t.Fatalf("the same commit again = %+v, %v; want %+v", again, err, rec)
	}

	// The entry was refused: the state still records nothing, and a
	// different commit takes the same sequence.
	f.Forget(ft.key)
	other := app
	other.CommitID, other.Entries, other.Offsets = "c2", []string{"e1", "e2"}, map[string]int64{"t/0": 20}
	_, err = f.Publish(ctx, ft, other)
	conflict, ok := errors.AsType[*sink.FollowerConflict](err)
	if !ok {
		t.Fatalf("another commit under sequence 1: %v, want a FollowerConflict", err)
	}
	if conflict.Sequence != 1 || conflict.Version != 0 || conflict.CommitID != "c1" ||
		!slices.Equal(conflict.Entries, []string{"e1"}) || conflict.Offsets["t/0"] != 10 {
		t.Fatalf("conflict = %+v, want what version 0 holds", conflict)
	}
	if *ft.fenced != 2 {
		t.Fatalf("a forgotten log was read again past the fence %d times, want 2", *ft.fenced)
	}

	// Recorded: the next append is sequence 2; a compaction follows it.
	tables.recorded[ft.key] = rec
	rec2, err := f.Publish(ctx, ft, other)
	if err != nil || rec2 != (ledger.DeltaCommit{Sequence: 2, Version: 1}) {
		t.Fatalf("the next append = %+v, %v; want sequence 2 at version 1", rec2, err)
	}
	merged := dataFile(t, dir, 0, "eu", 0, 9)
	rw := sink.FollowedRewrite{CommitID: "c3", At: at,
		Removed: []sink.FollowedFile{{FileDescriptor: file.FileDescriptor}}, Added: []sink.FollowedFile{{FileDescriptor: merged.FileDescriptor}}}
	if err := f.Rearrange(ctx, ft, rw); err != nil {
		t.Fatal(err)
	}
	ref, err := f.Referenced(ctx, ft)
	if err != nil {
		t.Fatal(err)
	}
	l, err := f.read(ctx, dir, 0)
	if err != nil || l.Version() != 2 || len(l.Files()) != 1 {
		t.Fatalf("after the compaction: version %d, %d live files (%v); want 2, 1", l.Version(), len(l.Files()), err)
	}
	if len(ref) != 2 {
		t.Fatalf("Referenced = %v, want the live file and the removed one in the tombstones", ref)
	}

	// A fence that refuses stops a log from being opened.
	f.Forget(ft.key)
	ft.fence = errors.New("stale committer")
	if _, err := f.Publish(ctx, ft, other); err == nil || !errors.Is(err, ft.fence) {
		t.Fatalf("Publish behind a refusing fence = %v", err)
	}
}

// TestFollowerDeadLetters: no dead-letter table yet mirrors nothing and
// reports no version; a table that does not write delta forgets its
// mirror and is never settled.
func TestFollowerDeadLetters(t *testing.T) {
	ctx := context.Background()
	tables := &followTables{recorded: map[string]ledger.DeltaCommit{}}
	f := NewFollower(tables, nil, Options{}, nil)
	key := ledger.TableKey([]string{"shop", "orders"})
	none := func(context.Context) (sink.FollowedTable, error) { return nil, nil }
	if err := f.Settle(ctx, key, none, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !f.isLevel(key) {
		t.Fatal("a table without a dead-letter table is not level after Settle")
	}
	if _, ok := f.DeadLetterVersion(key); ok {
		t.Fatal("a version is reported for a dead-letter log never mirrored")
	}
	failing := func(context.Context) (sink.FollowedTable, error) { return nil, errors.New("catalog down") }
	if err := f.MirrorDeadLetters(ctx, key, failing, time.Now()); err == nil {
		t.Fatal("a dead-letter table that cannot be loaded mirrored")
	}
	if f.isLevel(key) {
		t.Fatal("a failed mirror left the table level: Settle would not retry it")
	}
	tables.off = true
	if err := f.Settle(ctx, key, failing, time.Now()); err != nil {
		t.Fatalf("Settle of a table that writes no delta: %v", err)
	}
}
