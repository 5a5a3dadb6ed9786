package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/internal/clustertest"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/leak"
)

func TestMain(m *testing.M) { leak.VerifyTestMain(m) }

// openNode starts a single-node group in dir that leads.
func openNode(t *testing.T, dir string) *raftnode.Node { return clustertest.OpenNode(t, dir) }

// NewCatalog is the catalog of record on n, wired as package node wires it.
func NewCatalog(n *raftnode.Node, warehouse string, props iceberg.Properties) *Catalog {
	return New(clustertest.Replica(n), warehouse, props)
}

func TestCatalogCommitsThroughRaft(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	n := openNode(t, filepath.Join(dir, "node"))
	cat := NewCatalog(n, "file://"+filepath.Join(dir, "wh"), iceberg.Properties{})
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		t.Fatalf("second create = %v", err)
	}
	if err := cat.EnsureNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatalf("ensure existing namespace = %v", err)
	}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64})
	// A namespace with a location puts its tables there.
	if err := cat.EnsureNamespace(ctx, table.Identifier{"elsewhere"}, iceberg.Properties{"location": "file://" + filepath.Join(dir, "other")}); err != nil {
		t.Fatal(err)
	}
	other, err := cat.CreateTable(ctx, table.Identifier{"elsewhere", "t"}, sc)
	if err != nil {
		t.Fatal(err)
	}
	if want := "file://" + filepath.Join(dir, "other", "t"); other.Location() != want {
		t.Fatalf("table location %s, want %s", other.Location(), want)
	}
	ident := table.Identifier{"db", "t"}
	tbl, err := cat.CreateTable(ctx, ident, sc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(ctx, ident, sc); !errors.Is(err, catalog.ErrTableAlreadyExists) {
		t.Fatalf("duplicate table = %v", err)
	}

	// Two writers start from the same metadata; the second must lose.
	tx1 := tbl.NewTransaction()
	if err := tx1.AddFiles(ctx, nil, iceberg.Properties{"k": "1"}, false); err != nil {
		t.Fatal(err)
	}
	tx2 := tbl.NewTransaction()
	if err := tx2.AddFiles(ctx, nil, iceberg.Properties{"k": "2"}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := tx1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tx2.Commit(ctx); !errors.Is(err, table.ErrCommitFailed) {
		t.Fatalf("stale commit = %v, want ErrCommitFailed", err)
	}
	loaded, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.CurrentSnapshot().Summary.Properties["k"] != "1" || MetadataVersion(loaded.MetadataLocation()) != 1 {
		t.Fatalf("loaded %s summary %v", loaded.MetadataLocation(), loaded.CurrentSnapshot().Summary)
	}

	// Evolve the schema through the catalog, then reopen the node from disk:
	// the pointer survives a restart.
	tx := loaded.NewTransaction()
	if err := tx.UpdateSchema(true, false).AddColumn([]string{"b"}, iceberg.PrimitiveTypes.String, "", false, nil).Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	want, _ := cat.MetadataLocation(ident)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n2 := openNode(t, filepath.Join(dir, "node"))
	defer n2.Close()
	cat2 := NewCatalog(n2, "file://"+filepath.Join(dir, "wh"), iceberg.Properties{})
	got, err := cat2.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if got.MetadataLocation() != want || got.Schema().NumFields() != 2 {
		t.Fatalf("after restart: %s (want %s), %d fields", got.MetadataLocation(), want, got.Schema().NumFields())
	}
	var ids []string
	for id, err := range cat2.ListTables(ctx, table.Identifier{"db"}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, fmt.Sprint(id))
	}
	if len(ids) != 1 {
		t.Fatalf("tables = %v", ids)
	}
	if _, err := cat2.RenameTable(ctx, ident, table.Identifier{"db", "u"}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("rename = %v", err)
	}
	if err := cat2.DropNamespace(ctx, table.Identifier{"db"}); !errors.Is(err, catalog.ErrNamespaceNotEmpty) {
		t.Fatalf("drop non-empty namespace = %v", err)
	}
}

func TestStagedCommitIsAtomic(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	n := openNode(t, filepath.Join(dir, "node"))
	defer n.Close()
	cat := NewCatalog(n, "file://"+filepath.Join(dir, "wh"), iceberg.Properties{})
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64})
	a, err := cat.CreateTable(ctx, table.Identifier{"db", "a"}, sc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cat.CreateTable(ctx, table.Identifier{"db", "b"}, sc)
	if err != nil {
		t.Fatal(err)
	}
	aLoc, bLoc := a.MetadataLocation(), b.MetadataLocation()
	stage, apply := cat.Bind(committerOf(t, n, table.Identifier{"db", "b"}))
	if a, err = stage.LoadTable(ctx, table.Identifier{"db", "a"}); err != nil {
		t.Fatal(err)
	}
	boundB, err := apply.LoadTable(ctx, table.Identifier{"db", "b"})
	if err != nil {
		t.Fatal(err)
	}
	txa := a.NewTransaction()
	_ = txa.SetProperties(iceberg.Properties{"x": "1"})
	if _, err := txa.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if loc, _ := cat.MetadataLocation(table.Identifier{"db", "a"}); loc != aLoc {
		t.Fatal("staged commit was applied on its own")
	}
	// Someone else moves b first: the combined commit fails and a stays put.
	txOther := b.NewTransaction()
	_ = txOther.AddFiles(ctx, nil, nil, false)
	if _, err := txOther.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	txb := boundB.NewTransaction()
	_ = txb.AddFiles(ctx, nil, nil, false)
	if _, err := txb.Commit(ctx); !errors.Is(err, table.ErrCommitFailed) {
		t.Fatalf("combined commit on stale b = %v", err)
	}
	if loc, _ := cat.MetadataLocation(table.Identifier{"db", "a"}); loc != aLoc {
		t.Fatal("a moved although the combined commit failed")
	}
	if loc, _ := cat.MetadataLocation(table.Identifier{"db", "b"}); loc == bLoc {
		t.Fatal("the other writer's commit of b was lost")
	}
}

// committerOf gives the table the committer role n1 epoch 1 and returns a
// commit request of that committer for it.
func committerOf(t *testing.T, n *raftnode.Node, ident table.Identifier) *ledger.CommitRequest {
	t.Helper()
	a := ledger.Assignment{Node: "n1", Epoch: 1}
	key := ledger.TableKey(ident)
	if _, err := n.Apply(context.Background(), fsm.Assign{Committers: []fsm.CommitterAssignment{{Table: key, Assignment: a}}}); err != nil {
		t.Fatal(err)
	}
	return &ledger.CommitRequest{Table: key, Committer: a, At: time.Now().UnixMilli()}
}

// TestBoundCommitIsFenced: a bound commit names its committer or is
// refused before writing anything, and a stale committer's is refused by
// the replicated state with ledger.ErrStaleCommitter; a plain commit is a
// pointer swap alone.
func TestBoundCommitIsFenced(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	n := openNode(t, filepath.Join(dir, "node"))
	defer n.Close()
	cat := NewCatalog(n, "file://"+filepath.Join(dir, "wh"), iceberg.Properties{})
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	ident := table.Identifier{"db", "t"}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64})
	if _, err := cat.CreateTable(ctx, ident, sc); err != nil {
		t.Fatal(err)
	}
	req := committerOf(t, n, ident)
	commit := func(io table.CatalogIO) error {
		t.Helper()
		tbl, err := io.LoadTable(ctx, ident)
		if err != nil {
			return err
		}
		tx := tbl.NewTransaction()
		if err := tx.SetProperties(iceberg.Properties{"x": time.Now().String()}); err != nil {
			t.Fatal(err)
		}
		_, err = tx.Commit(ctx)
		return err
	}
	before, _ := cat.MetadataLocation(ident)

	noCommitter := *req
	noCommitter.Committer = ledger.Assignment{}
	_, apply := cat.Bind(&noCommitter)
	err := commit(apply)
	if !errors.Is(err, ErrNoCommitter) || !strings.Contains(err.Error(), "db.t") {
		t.Fatalf("commit without a committer = %v, want ErrNoCommitter naming db.t", err)
	}
	if _, _, err := apply.CommitTable(ctx, ident, nil, []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"y": "1"})}); !errors.Is(err, ErrNoCommitter) {
		t.Fatalf("CommitTable without a committer = %v", err)
	}
	if loc, _ := cat.MetadataLocation(ident); loc != before {
		t.Fatalf("a refused request moved the table to %s", loc)
	}

	stale := *req
	stale.Committer.Epoch = 0
	_, apply = cat.Bind(&stale)
	if err := commit(apply); !errors.Is(err, ledger.ErrStaleCommitter) {
		t.Fatalf("stale committer's commit = %v, want ledger.ErrStaleCommitter", err)
	}
	if loc, _ := cat.MetadataLocation(ident); loc != before {
		t.Fatalf("a stale committer moved the table to %s", loc)
	}

	_, apply = cat.Bind(req)
	if err := commit(apply); err != nil {
		t.Fatalf("current committer's commit = %v", err)
	}
	var st fsm.Table
	n.FSM().Read(func(s *fsm.State) { st = *s.Tables[req.Table] })
	if st.MetadataLocation == before || st.LastCommitAt != req.At {
		t.Fatalf("bound commit not applied with its request: %+v", st)
	}
	// Without a session, a commit is the pointer swap alone.
	if err := commit(cat); err != nil {
		t.Fatalf("plain commit = %v", err)
	}
}
