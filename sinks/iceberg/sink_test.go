package iceberg

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/sinks/sink"
)

// newSink returns a sink on a single-node group that leads, and the
// committer role n1 holds for every table the test names with committer.
func newSink(t testing.TB) (*Sink, *catalog.Catalog, *raftnode.Node) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	n, err := raftnode.Open(raftnode.NodeConfig{ID: "n1", RaftAddr: addr, DataDir: filepath.Join(dir, "node"), BootstrapExpect: 1, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	wait.For(t, 30*time.Second, "the node to lead", n.IsLeader)
	// Level-gated commands (a rewind, a Delta commit) are refused until
	// the node's own registration is applied: a loaded machine made a
	// test's rewind race it (RewindTable needs protocol level 2).
	wait.For(t, 30*time.Second, "the node's registration to apply", n.Registered)
	cat := newCatalog(n, "file://"+filepath.Join(dir, "wh"), iceberg.Properties{})
	s := New(cat, 64<<20, nil, nil)
	s.SetFence(&testFence{n: n})
	return s, cat, n
}

// committer gives table key the committer role n1 epoch 1 on n and
// returns it: maintenance commits are fenced by it.
func committer(t *testing.T, n *raftnode.Node, key string) ledger.Assignment {
	t.Helper()
	a := ledger.Assignment{Node: "n1", Epoch: 1}
	if _, err := n.Apply(context.Background(), fsm.Assign{Committers: []fsm.CommitterAssignment{{Table: key, Assignment: a}}}); err != nil {
		t.Fatal(err)
	}
	return a
}

func TestRawRoundTripAndDescriptor(t *testing.T) {
	ctx := context.Background()
	s, cat, _ := newSink(t)
	spec := sink.TableSpec{Key: ledger.TableKey([]string{"db", "raw"}), Ident: []string{"db", "raw"}, Format: "raw"}
	ts := time.UnixMilli(1_700_000_000_123)
	recs := []*records.Record{
		{Topic: "t", Partition: 1, Offset: 7, Timestamp: ts, Key: []byte("k"), Raw: []byte("v1"),
			Headers: []records.Header{{Key: "h", Value: []byte("1")}, {Key: "h", Value: nil}}},
		{Topic: "t", Partition: 1, Offset: 8, Timestamp: ts, Key: nil, Raw: nil},
	}
	files, err := s.Write(ctx, spec, "0b5c2a94-4a8c-4f43-9d6b-2f0f5e1b7c11", recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].RecordCount != 2 || files[0].SizeBytes == 0 || len(files[0].LowerBounds) == 0 {
		t.Fatalf("descriptor %+v", files)
	}
	tbl, err := cat.LoadTable(ctx, spec.Ident)
	if err != nil {
		t.Fatal(err)
	}
	df, err := rebuild(tbl.Metadata(), files[0])
	if err != nil {
		t.Fatal(err)
	}
	if back := describe(df); !reflect.DeepEqual(back, files[0]) {
		t.Fatalf("descriptor does not round-trip:\n%+v\n%+v", files[0], back)
	}

	// Commit through the ledger path and read the rows back.
	tp := ledger.TopicPartition{Topic: "t", Partition: 1}
	if err := commitForTest(ctx, s, cat, spec, files, tp); err != nil {
		t.Fatal(err)
	}
	tbl, _ = cat.LoadTable(ctx, spec.Ident)
	arr, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Release()
	if arr.NumRows() != 2 {
		t.Fatalf("rows %d", arr.NumRows())
	}
	val := arr.Column(int(arr.Schema().FieldIndices(ColValue)[0])).Data().Chunk(0).(*array.Binary)
	key := arr.Column(int(arr.Schema().FieldIndices(ColKey)[0])).Data().Chunk(0).(*array.Binary)
	if string(val.Value(0)) != "v1" || !val.IsNull(1) || !key.IsNull(1) {
		t.Fatalf("values %v keys %v", val, key)
	}
	hdr := arr.Column(int(arr.Schema().FieldIndices(ColHeaders)[0])).Data().Chunk(0).(*array.List)
	if hdr.IsNull(0) || !hdr.IsNull(1) {
		t.Fatalf("headers %v", hdr)
	}
	offs, err := Offsets(tbl.CurrentSnapshot())
	if err != nil || offs["t/1"] != 9 {
		t.Fatalf("floe.offsets %v %v", offs, err)
	}
}

// commitForTest commits files the way the worker does, without a ledger
// entry (a commit bound to no request is the pointer swap alone).
func commitForTest(ctx context.Context, s *Sink, cat *catalog.Catalog, spec sink.TableSpec, files []ledger.FileDescriptor, tp ledger.TopicPartition) error {
	tbl, err := cat.LoadTable(ctx, spec.Ident)
	if err != nil {
		return err
	}
	var dfs []iceberg.DataFile
	for _, f := range files {
		df, err := rebuild(tbl.Metadata(), f)
		if err != nil {
			return err
		}
		dfs = append(dfs, df)
	}
	tx := tbl.NewTransaction()
	if err := tx.AddDataFiles(ctx, dfs, iceberg.Properties{PropOffsets: `{"` + tp.String() + `":9}`}); err != nil {
		return err
	}
	_, err = tx.Commit(ctx)
	return err
}

func TestShapeSchemaRoundTrip(t *testing.T) {
	shape := &records.Shape{Kind: records.Struct, Fields: []*records.Field{
		{Name: "a", Shape: &records.Shape{Kind: records.Long}},
		{Name: "l", Shape: &records.Shape{Kind: records.List, Elem: &records.Shape{Kind: records.Struct, Fields: []*records.Field{{Name: "x", Shape: &records.Shape{Kind: records.Double}}}}}},
		{Name: "b", Shape: &records.Shape{Kind: records.Bool}},
	}}
	sc, err := tableSchema("json", shape)
	if err != nil {
		t.Fatal(err)
	}
	back, err := shapeOf(sc, "json")
	if err != nil {
		t.Fatal(err)
	}
	if back.String() != shape.String() || back.HasUncommitted() {
		t.Fatalf("round trip: %s vs %s", back, shape)
	}
	bad := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "d", Type: iceberg.PrimitiveTypes.Date})
	if _, err := shapeOf(bad, "json"); err == nil {
		t.Fatal("date column accepted for a json table")
	}
}

func TestExpireAndMetadataFilesBounded(t *testing.T) {
	ctx := context.Background()
	s, cat, rn := newSink(t)
	spec := sink.TableSpec{Key: ledger.TableKey([]string{"db", "x"}), Ident: []string{"db", "x"}, Format: "raw"}
	a := committer(t, rn, spec.Key)
	// Before the first data the table does not exist: nothing to do, no error.
	if n, err := s.Expire(ctx, spec.Key, time.Hour, 1, time.Now(), a); n != 0 || err != nil {
		t.Fatalf("expiry of a table not created yet: %d, %v", n, err)
	}
	if n, _, err := s.CleanOrphans(ctx, spec.Key, time.Hour, nil, a); n != 0 || err != nil {
		t.Fatalf("orphan cleanup of a table not created yet: %d, %v", n, err)
	}
	if err := s.Prepare(ctx, spec, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		tbl, err := cat.LoadTable(ctx, spec.Ident)
		if err != nil {
			t.Fatal(err)
		}
		tx := tbl.NewTransaction()
		if err := tx.AddFiles(ctx, nil, iceberg.Properties{PropOffsets: `{"t/0":` + string(rune('0'+i%10)) + `}`}, false); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		nextMilli(t) // distinct snapshot timestamps
	}
	tbl, _ := cat.LoadTable(ctx, spec.Ident)
	if n := len(tbl.Metadata().Snapshots()); n != 60 {
		t.Fatalf("snapshots before expiry: %d", n)
	}
	cur := tbl.CurrentSnapshot().SnapshotID
	n, err := s.Expire(ctx, spec.Key, 7*24*time.Hour, 10, time.Now(), a)
	if err != nil {
		t.Fatal(err)
	}
	tbl, _ = cat.LoadTable(ctx, spec.Ident)
	if n != 50 || len(tbl.Metadata().Snapshots()) != 10 || tbl.CurrentSnapshot().SnapshotID != cur {
		t.Fatalf("expired %d, %d left, current %d (was %d)", n, len(tbl.Metadata().Snapshots()), tbl.CurrentSnapshot().SnapshotID, cur)
	}
	// Age is the stricter bound now: everything but the current snapshot
	// goes. Expire is asked as of 5 ms from now, so every snapshot is past
	// the 1 ms age without waiting for it.
	if n, err = s.Expire(ctx, spec.Key, time.Millisecond, 500, time.Now().Add(5*time.Millisecond), a); err != nil || n != 9 {
		t.Fatalf("age expiry: %d, %v", n, err)
	}
	tbl, _ = cat.LoadTable(ctx, spec.Ident)
	if tbl.CurrentSnapshot().SnapshotID != cur || len(tbl.Metadata().Snapshots()) != 1 {
		t.Fatal("current snapshot expired")
	}
	// Old metadata files are deleted after commit: about 50 stay.
	dir := strings.TrimPrefix(tbl.Location(), "file://") + "/metadata"
	files, _ := filepath.Glob(filepath.Join(dir, "*.metadata.json"))
	if len(files) > 53 {
		t.Fatalf("%d metadata files kept", len(files))
	}
}

func TestCleanOrphans(t *testing.T) {
	ctx := context.Background()
	s, cat, rn := newSink(t)
	spec := sink.TableSpec{Key: ledger.TableKey([]string{"db", "o"}), Ident: []string{"db", "o"}, Format: "raw"}
	a := committer(t, rn, spec.Key)
	rec := func(off int64) []*records.Record {
		return []*records.Record{{Topic: "t", Partition: 0, Offset: off, Raw: []byte("v")}}
	}
	committed, err := s.Write(ctx, spec, "11111111-1111-4111-8111-111111111111", rec(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := commitForTest(ctx, s, cat, spec, committed, ledger.TopicPartition{Topic: "t"}); err != nil {
		t.Fatal(err)
	}
	pending, err := s.Write(ctx, spec, "22222222-2222-4222-8222-222222222222", rec(1)) // recorded, not yet committed
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := s.Write(ctx, spec, "33333333-3333-4333-8333-333333333333", rec(2)) // a crashed writer's file
	if err != nil {
		t.Fatal(err)
	}
	// What an engine refused by the REST catalog (Floe's tables have one
	// writer) left behind: PyIceberg, Spark and DuckDB write the data and
	// metadata files before the commit that is refused.
	tbl0, err := cat.LoadTable(ctx, spec.Ident)
	if err != nil {
		t.Fatal(err)
	}
	root := strings.TrimPrefix(tbl0.Location(), "file://")
	var refused []string
	for _, rel := range []string{"data/00000-0-5f2a9c1e-pyiceberg.parquet", "metadata/00002-9b1d-spark.metadata.json", "metadata/snap-77-1-4e0c-duckdb.avro"} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("written before the commit was refused"), 0o644); err != nil {
			t.Fatal(err)
		}
		refused = append(refused, p)
	}
	exists := func(p string) bool {
		_, err := filepath.Glob(p)
		if err != nil {
			t.Fatal(err)
		}
		_, statErr := osStat(strings.TrimPrefix(p, "file://"))
		return statErr == nil
	}
	keep := map[string]bool{pending[0].Path: true}
	// Younger than the safety age: nothing goes.
	if n, _, err := s.CleanOrphans(ctx, spec.Key, time.Hour, keep, a); err != nil || n != 0 {
		t.Fatalf("young files deleted: %d, %v", n, err)
	}
	olderThan(t, 10*time.Millisecond, append([]string{orphan[0].Path}, refused...)...)
	// Old by this node's clock but written after the table's last commit:
	// kept (orphanclock.go) until the table commits again.
	if n, _, err := s.CleanOrphans(ctx, spec.Key, 10*time.Millisecond, keep, a); err != nil || n != 0 {
		t.Fatalf("files written after the last commit deleted: %d, %v", n, err)
	}
	later, err := s.Write(ctx, spec, "44444444-4444-4444-8444-444444444444", rec(3))
	if err != nil {
		t.Fatal(err)
	}
	if err := commitForTest(ctx, s, cat, spec, later, ledger.TopicPartition{Topic: "t"}); err != nil {
		t.Fatal(err)
	}
	n, b, err := s.CleanOrphans(ctx, spec.Key, 10*time.Millisecond, keep, a)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1+len(refused) || b == 0 || exists(orphan[0].Path) {
		t.Fatalf("deleted %d files (%d bytes); orphan still there: %v", n, b, exists(orphan[0].Path))
	}
	for _, p := range refused {
		if exists(p) {
			t.Errorf("a refused client's file is still there: %s", p)
		}
	}
	if !exists(committed[0].Path) || !exists(pending[0].Path) {
		t.Fatal("a referenced or recorded file was deleted")
	}
	tbl, _ := cat.LoadTable(ctx, spec.Ident)
	arr, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Release()
	if arr.NumRows() != 2 {
		t.Fatalf("rows after cleanup: %d", arr.NumRows())
	}
}

var osStat = os.Stat

// nextMilli waits until the millisecond clock has moved past now, so that
// the next snapshot's timestamp (milliseconds, iceberg-go's clock) is later
// than the last one's.
func nextMilli(t *testing.T) {
	t.Helper()
	now := time.Now().UnixMilli()
	wait.For(t, time.Second, "the next millisecond", func() bool { return time.Now().UnixMilli() > now })
}

// olderThanAll waits until every file under root was last written more
// than age ago.
func olderThanAll(t *testing.T, age time.Duration, root string) {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	olderThan(t, age, paths...)
}

// olderThan waits until every file at paths (file:// or plain) was last
// written more than age ago, the age orphan cleanup spares files under.
func olderThan(t *testing.T, age time.Duration, paths ...string) {
	t.Helper()
	wait.For(t, 5*time.Second, "the files to age past "+age.String(), func() bool {
		for _, p := range paths {
			st, err := osStat(strings.TrimPrefix(p, "file://"))
			if err != nil {
				t.Fatal(err)
			}
			if time.Since(st.ModTime()) <= age {
				return false
			}
		}
		return true
	})
}

// TestCommitsAreFenced: the sink's commits run as the committer they are
// given: a stale one is refused with ledger.ErrStaleCommitter and none is
// refused before anything is written; the table stays where it was.
func TestCommitsAreFenced(t *testing.T) {
	ctx := context.Background()
	s, cat, rn := newSink(t)
	spec := sink.TableSpec{Key: ledger.TableKey([]string{"db", "f"}), Ident: []string{"db", "f"}, Format: "raw"}
	a := committer(t, rn, spec.Key)
	if err := s.Prepare(ctx, spec, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := s.Commit(ctx, spec.Key, nil, a, time.Now()); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		nextMilli(t) // distinct snapshot timestamps
	}
	before, _ := cat.MetadataLocation(spec.Ident)
	stale := ledger.Assignment{Node: "n1", Epoch: 0}
	if err := s.Commit(ctx, spec.Key, nil, stale, time.Now()); !errors.Is(err, ledger.ErrStaleCommitter) {
		t.Fatalf("stale committer's commit = %v", err)
	}
	if _, err := s.Expire(ctx, spec.Key, time.Millisecond, 500, time.Now(), stale); !errors.Is(err, ledger.ErrStaleCommitter) {
		t.Fatalf("stale committer's expiry = %v", err)
	}
	if _, err := s.Expire(ctx, spec.Key, time.Millisecond, 500, time.Now(), ledger.Assignment{}); !errors.Is(err, catalog.ErrNoCommitter) {
		t.Fatalf("expiry without a committer = %v", err)
	}
	if loc, _ := cat.MetadataLocation(spec.Ident); loc != before {
		t.Fatalf("refused commits moved the table to %s", loc)
	}
	if n, err := s.Expire(ctx, spec.Key, time.Millisecond, 500, time.Now(), a); err != nil || n != 2 {
		t.Fatalf("committer's expiry: %d, %v", n, err)
	}
}
