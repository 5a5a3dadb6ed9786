package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/ledger"
)

// recEnv is a single-node cluster with a table db.orders fed by topic
// "orders" (two partitions) and its dead-letter table, committed the way the
// sink does: summary properties plus a ledger.CommitRequest bound to the
// catalog.
type recEnv struct {
	ctx     context.Context
	dir, wh string
	n       *Node
	cat     *Catalog
	key     string
}

var (
	recIdent    = table.Identifier{"db", "orders"}
	recDLQIdent = table.Identifier{"db", "orders_dlq"}
	recP0       = ledger.TopicPartition{Topic: "orders", Partition: 0}
	recP1       = ledger.TopicPartition{Topic: "orders", Partition: 1}
)

func newRecEnv(t *testing.T) *recEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	n := openNode(t, filepath.Join(dir, "node"))
	t.Cleanup(func() { _ = n.Close() })
	e := &recEnv{ctx: ctx, dir: dir, wh: "file://" + filepath.Join(dir, "wh"), n: n, key: ledger.TableKey(recIdent)}
	e.cat = NewCatalog(n, e.wh, iceberg.Properties{})
	if err := e.cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64})
	for _, id := range []table.Identifier{recIdent, recDLQIdent} {
		if _, err := e.cat.CreateTable(ctx, id, sc); err != nil {
			t.Fatal(err)
		}
	}
	e.apply(t, RegisterSources{Sources: []TopicSource{{Topic: "orders", Table: e.key, Partitions: 2}}})
	one := ledger.Assignment{Node: "n1", Epoch: 1}
	e.apply(t, Assign{
		Partitions: []PartitionAssignment{{TopicPartition: recP0, Assignment: one}, {TopicPartition: recP1, Assignment: one}},
		Committers: []CommitterAssignment{{Table: e.key, Assignment: one}},
	})
	return e
}

func (e *recEnv) apply(t *testing.T, c Command) {
	t.Helper()
	if _, err := e.n.Apply(e.ctx, c); err != nil {
		t.Fatalf("%s: %v", c.Type(), err)
	}
}

// record adds a pending ledger entry covering ranges (epoch 1).
func (e *recEnv) record(t *testing.T, id string, ranges ...ledger.Range) {
	t.Helper()
	for i := range ranges {
		ranges[i].Epoch = 1
	}
	e.apply(t, RecordFiles{Table: e.key, Entry: ledger.Entry{ID: id, Node: "n1", Ranges: ranges}})
}

// intent returns the summary properties of a commit of ids and the two
// views of its commit session (stage, apply).
func (e *recEnv) intent(ids []string, offsets map[string]int64, epoch uint64) (iceberg.Properties, table.CatalogIO, table.CatalogIO) {
	off, _ := json.Marshal(offsets)
	id := uuid.NewString()
	props := iceberg.Properties{summaryOffsets: string(off), summaryCommitID: id, "floe.entries": strings.Join(ids, ",")}
	stage, apply := e.cat.Bind(&ledger.CommitRequest{Table: e.key, Entries: ids, Committer: ledger.Assignment{Node: "n1", Epoch: epoch},
		CommitID: id, At: time.Now().UnixMilli()})
	return props, stage, apply
}

// stageDLQ writes the dead-letter half of a commit without applying it.
func (e *recEnv) stageDLQ(t *testing.T, props iceberg.Properties, stage table.CatalogIO) {
	t.Helper()
	d, err := stage.LoadTable(e.ctx, recDLQIdent)
	if err != nil {
		t.Fatal(err)
	}
	tx := d.NewTransaction()
	if err := tx.AddFiles(e.ctx, nil, props, false); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
}

// commit commits entries ids with the given summary offsets, together with
// a dead-letter snapshot when dlq is set, as committer epoch.
func (e *recEnv) commit(t *testing.T, ids []string, offsets map[string]int64, dlq bool, epoch uint64) error {
	t.Helper()
	props, stage, apply := e.intent(ids, offsets, epoch)
	if dlq {
		e.stageDLQ(t, props, stage)
	}
	tbl, err := apply.LoadTable(e.ctx, recIdent)
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.AddFiles(e.ctx, nil, props, false); err != nil {
		t.Fatal(err)
	}
	_, err = tx.Commit(e.ctx)
	return err
}

func (e *recEnv) mustCommit(t *testing.T, ids []string, offsets map[string]int64, dlq bool) {
	t.Helper()
	if err := e.commit(t, ids, offsets, dlq, 1); err != nil {
		t.Fatal(err)
	}
}

func (e *recEnv) backup(t *testing.T) {
	t.Helper()
	if err := NewBackup(e.n.FSM(), e.wh, iceberg.Properties{}, nil).WriteOnce(e.ctx); err != nil {
		t.Fatal(err)
	}
}

func (e *recEnv) loc(t *testing.T, ident table.Identifier) string {
	t.Helper()
	loc, err := e.cat.MetadataLocation(ident)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func (e *recEnv) recover(t *testing.T) *State {
	t.Helper()
	st, err := Recover(e.ctx, e.wh, iceberg.Properties{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// metadataFiles lists the local metadata directory of a table by version.
func (e *recEnv) metadataFiles(t *testing.T, name string) map[int][]string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(e.dir, "wh", "db", name, "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int][]string{}
	for _, d := range ents {
		if v := MetadataVersion("/" + d.Name()); v >= 0 {
			out[v] = append(out[v], d.Name())
		}
	}
	return out
}

// writeOrphan writes a metadata file at version v of table name: the
// metadata at from, changed by a property update (so it descends from from).
func (e *recEnv) writeOrphan(t *testing.T, name, from string, v int) string {
	t.Helper()
	base, err := metadataAt(e.ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	m, err := table.UpdateTableMetadata(base, []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"orphan": "1"})}, from)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	file := fmt.Sprintf("%05d-%s.metadata.json", v, uuid.NewString())
	if err := os.WriteFile(filepath.Join(e.dir, "wh", "db", name, "metadata", file), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func wantOffsets(t *testing.T, st *State, key string, tp ledger.TopicPartition, want ledger.Offsets) {
	t.Helper()
	got, ok := st.Ledger.Position(key, tp)
	if !ok || got != want {
		t.Fatalf("%s: offsets %+v (known %v), want %+v", tp, got, ok, want)
	}
}

func TestRecoverTakesNewerOfBackupAndTable(t *testing.T) {
	e := newRecEnv(t)
	e.record(t, "e1", ledger.Range{TopicPartition: recP0, From: 0, To: 10})
	e.mustCommit(t, []string{"e1"}, map[string]int64{"orders/0": 10}, true)
	e.backup(t)
	backedUp := e.loc(t, recIdent)

	// Two commits after the backup: the backup says 10, the table 25 and 7.
	e.record(t, "e2", ledger.Range{TopicPartition: recP0, From: 10, To: 20})
	e.mustCommit(t, []string{"e2"}, map[string]int64{"orders/0": 20}, true)
	e.record(t, "e3", ledger.Range{TopicPartition: recP0, From: 20, To: 25}, ledger.Range{TopicPartition: recP1, From: 0, To: 7})
	e.mustCommit(t, []string{"e3"}, map[string]int64{"orders/0": 25, "orders/1": 7}, false)
	// Recorded after the last commit: lost with the cluster, fetched again.
	e.record(t, "e4", ledger.Range{TopicPartition: recP0, From: 25, To: 30})

	st := e.recover(t)
	main, dlq := st.Tables[e.key], st.Tables[DLQKey(e.key)]
	if want := e.loc(t, recIdent); main.MetadataLocation != want || MetadataVersion(want) != 3 {
		t.Fatalf("pointer %s, want newest %s", main.MetadataLocation, want)
	}
	if main.PreviousMetadataLocation == backedUp || MetadataVersion(main.PreviousMetadataLocation) != 2 {
		t.Fatalf("previous pointer %s", main.PreviousMetadataLocation)
	}
	if want := e.loc(t, recDLQIdent); dlq.MetadataLocation != want || MetadataVersion(want) != 2 {
		t.Fatalf("dead-letter pointer %s, want %s", dlq.MetadataLocation, want)
	}
	wantOffsets(t, st, e.key, recP0, ledger.Offsets{Start: 0, Committed: 25, End: 25})
	wantOffsets(t, st, e.key, recP1, ledger.Offsets{Start: 7, Committed: 7, End: 7})
	if len(st.Ledger.Pending) != 0 || len(st.Ledger.Offsets) != 1 {
		t.Fatalf("pending %v, offsets of %d tables", st.Ledger.Pending, len(st.Ledger.Offsets))
	}

	// The recovered state installs into a new cluster and ingestion resumes
	// from the committed offsets.
	n2 := openNode(t, filepath.Join(e.dir, "node2"))
	defer n2.Close()
	if _, err := n2.Apply(e.ctx, RestoreState{State: st}); err != nil {
		t.Fatal(err)
	}
	if _, err := n2.Apply(e.ctx, Assign{Partitions: []PartitionAssignment{{TopicPartition: recP0, Assignment: ledger.Assignment{Node: "n1", Epoch: 2}}}}); err != nil {
		t.Fatal(err)
	}
	_, err := n2.Apply(e.ctx, RecordFiles{Table: e.key, Entry: ledger.Entry{ID: "e5", Node: "n1", Ranges: []ledger.Range{{TopicPartition: recP0, From: 25, To: 30, Epoch: 2}}}})
	if err != nil {
		t.Fatalf("resuming at the committed offset: %v", err)
	}
	cat2 := NewCatalog(n2, e.wh, iceberg.Properties{})
	tbl, err := cat2.LoadTable(e.ctx, recIdent)
	if err != nil || tbl.CurrentSnapshot().Summary.Properties[summaryOffsets] != `{"orders/0":25,"orders/1":7}` {
		t.Fatalf("restored catalog: %v", err)
	}
}

func TestRecoverSkipsDebris(t *testing.T) {
	e := newRecEnv(t)
	e.record(t, "e1", ledger.Range{TopicPartition: recP0, From: 0, To: 10})
	e.mustCommit(t, []string{"e1"}, map[string]int64{"orders/0": 10}, false)
	e.backup(t)
	e.record(t, "e2", ledger.Range{TopicPartition: recP0, From: 10, To: 20})
	e.mustCommit(t, []string{"e2"}, map[string]int64{"orders/0": 20}, false)
	v2 := e.loc(t, recIdent)

	// A file at v3 built on v1 (not on the pointer) and a truncated one.
	v1 := ""
	for _, f := range e.metadataFiles(t, "orders")[1] {
		v1 = e.wh + "/db/orders/metadata/" + f
	}
	e.writeOrphan(t, "orders", v1, 3)
	if err := os.WriteFile(filepath.Join(e.dir, "wh", "db", "orders", "metadata", "00003-cut.metadata.json"), []byte(`{"format-version"`), 0o644); err != nil {
		t.Fatal(err)
	}
	st := e.recover(t)
	if st.Tables[e.key].MetadataLocation != v2 {
		t.Fatalf("adopted %s, want %s", st.Tables[e.key].MetadataLocation, v2)
	}
	wantOffsets(t, st, e.key, recP0, ledger.Offsets{Start: 0, Committed: 20, End: 20})

	// Two files built on v2 at v3, neither with a descendant: the tip is
	// ambiguous, recovery stays at v2 (the v3 commit is re-fetched).
	e.record(t, "e3", ledger.Range{TopicPartition: recP0, From: 20, To: 30})
	e.mustCommit(t, []string{"e3"}, map[string]int64{"orders/0": 30}, false)
	v3 := e.loc(t, recIdent)
	e.writeOrphan(t, "orders", v2, 3)
	st = e.recover(t)
	if st.Tables[e.key].MetadataLocation != v2 {
		t.Fatalf("ambiguous tip: adopted %s, want %s", st.Tables[e.key].MetadataLocation, v2)
	}
	wantOffsets(t, st, e.key, recP0, ledger.Offsets{Start: 0, Committed: 20, End: 20})

	// One more commit on the real v3 settles it: v3 was the pointer.
	e.record(t, "e4", ledger.Range{TopicPartition: recP0, From: 30, To: 40})
	e.mustCommit(t, []string{"e4"}, map[string]int64{"orders/0": 40}, false)
	st = e.recover(t)
	if got, want := st.Tables[e.key].MetadataLocation, e.loc(t, recIdent); got != want {
		t.Fatalf("adopted %s, want %s", got, want)
	}
	if st.Tables[e.key].PreviousMetadataLocation != v3 {
		t.Fatalf("walked through %s, want %s", st.Tables[e.key].PreviousMetadataLocation, v3)
	}
	wantOffsets(t, st, e.key, recP0, ledger.Offsets{Start: 0, Committed: 40, End: 40})
}

func TestRecoverKeepsDeadLettersWithTheirTable(t *testing.T) {
	e := newRecEnv(t)
	e.record(t, "e1", ledger.Range{TopicPartition: recP0, From: 0, To: 10})
	e.mustCommit(t, []string{"e1"}, map[string]int64{"orders/0": 10}, true)
	e.backup(t)
	dlq1 := e.loc(t, recDLQIdent)

	// The cluster dies between staging the dead-letter half and applying
	// the commit: the staged file descends from the pointer but its table
	// never got the commit.
	e.record(t, "e2", ledger.Range{TopicPartition: recP0, From: 10, To: 20})
	props, stage, _ := e.intent([]string{"e2"}, map[string]int64{"orders/0": 20}, 1)
	e.stageDLQ(t, props, stage)
	st := e.recover(t)
	if got := st.Tables[DLQKey(e.key)].MetadataLocation; got != dlq1 {
		t.Fatalf("dead-letter table moved to %s without its table", got)
	}
	wantOffsets(t, st, e.key, recP0, ledger.Offsets{Start: 0, Committed: 10, End: 10})

	// The retried commit lands: two dead-letter files at v2, only one of
	// which belongs to a commit of the table.
	e.mustCommit(t, []string{"e2"}, map[string]int64{"orders/0": 20}, true)
	if n := len(e.metadataFiles(t, "orders_dlq")[2]); n != 2 {
		t.Fatalf("%d dead-letter files at v2", n)
	}
	st = e.recover(t)
	if got, want := st.Tables[DLQKey(e.key)].MetadataLocation, e.loc(t, recDLQIdent); got != want {
		t.Fatalf("dead-letter table at %s, want %s", got, want)
	}
	wantOffsets(t, st, e.key, recP0, ledger.Offsets{Start: 0, Committed: 20, End: 20})
}

func TestRefusedCommitRemovesItsMetadata(t *testing.T) {
	e := newRecEnv(t)
	e.record(t, "e1", ledger.Range{TopicPartition: recP0, From: 0, To: 10})
	// A committer from an old epoch: the FSM refuses for good.
	err := e.commit(t, []string{"e1"}, map[string]int64{"orders/0": 10}, true, 0)
	if !errors.Is(err, ErrStaleCommitter) {
		t.Fatalf("stale commit = %v", err)
	}
	for _, name := range []string{"orders", "orders_dlq"} {
		if files := e.metadataFiles(t, name); len(files[1]) != 0 || len(files[0]) != 1 {
			t.Fatalf("%s metadata after a refused commit: %v", name, files)
		}
	}
	e.mustCommit(t, []string{"e1"}, map[string]int64{"orders/0": 10}, true)
	if files := e.metadataFiles(t, "orders"); len(files[1]) != 1 {
		t.Fatalf("metadata after the commit: %v", files)
	}
}

func TestRecoverWithoutBackup(t *testing.T) {
	wh := "file://" + t.TempDir()
	_, err := Recover(context.Background(), wh, iceberg.Properties{}, nil)
	if !errors.Is(err, ErrNoBackup) || !strings.Contains(err.Error(), BackupLocation(wh)) {
		t.Fatalf("recover from an empty warehouse = %v", err)
	}
	// A backup written by a newer Floe is refused, not misread.
	dir := strings.TrimPrefix(wh, "file://")
	if err := os.MkdirAll(filepath.Join(dir, "_floe", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_floe", "state", "latest.json"), []byte(`{"version": 99, "state": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Recover(context.Background(), wh, iceberg.Properties{}, nil)
	if !errors.Is(err, ErrSnapshotVersion) {
		t.Fatalf("recover from a future backup = %v", err)
	}
	// The refusal says what it read and which versions are involved.
	for _, want := range []string{BackupLocation(wh), "state backup format version 99", "up to version 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("recover from a future backup = %v: does not say %q", err, want)
		}
	}
	if _, err := ReadBackup(context.Background(), wh, iceberg.Properties{}); !strings.Contains(fmt.Sprint(err), "state backup format version 99") {
		t.Errorf("reading a future backup = %v", err)
	}
}
