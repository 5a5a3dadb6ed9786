package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"go.uber.org/goleak"

	"github.com/floe-io/floe/cluster/internal/clustertest"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/ledger"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Raft's transport and bolt keep no goroutines after Close, but the
		// net/http keep-alive pool of iceberg-go's IO may linger briefly.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

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
	intent := &ledger.CommitIntent{Stage: true}
	txa := a.NewTransaction()
	_ = txa.SetProperties(iceberg.Properties{"x": "1"})
	if _, err := txa.Commit(ledger.WithCommitIntent(ctx, intent)); err != nil {
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
	intent.Stage = false
	txb := b.NewTransaction()
	_ = txb.AddFiles(ctx, nil, nil, false)
	if _, err := txb.Commit(ledger.WithCommitIntent(ctx, intent)); !errors.Is(err, table.ErrCommitFailed) {
		t.Fatalf("combined commit on stale b = %v", err)
	}
	if loc, _ := cat.MetadataLocation(table.Identifier{"db", "a"}); loc != aLoc {
		t.Fatal("a moved although the combined commit failed")
	}
	if loc, _ := cat.MetadataLocation(table.Identifier{"db", "b"}); loc == bLoc {
		t.Fatal("the other writer's commit of b was lost")
	}
}
