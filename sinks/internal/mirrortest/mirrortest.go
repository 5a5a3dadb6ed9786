package mirrortest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/sinks/sink"
)

// Mirror is one catalog mirror under test and a view of the fake catalog it
// writes to.
type Mirror struct {
	Sync func(context.Context, sink.SyncTable) error
	Drop func(context.Context, sink.SyncTable) error
	// Location is the metadata location the catalog's entry for ident
	// points at, "" when there is none.
	Location func(ident []string) string
	// Alter points the entry for ident at loc, as a person editing the
	// catalog by hand would.
	Alter func(ident []string, loc string)
	// SetDown makes the catalog unreachable (true) or reachable again.
	SetDown func(down bool)
	// ReadsMetadata: the mirror reads the metadata file it syncs (to
	// describe the table's columns), so a missing file is its error.
	ReadsMetadata bool
}

// WriteMetadata writes version v of a table's metadata under dir, with
// schema sc (one required id column when nil), and returns its file://
// location.
func WriteMetadata(t testing.TB, dir, v string, sc *iceberg.Schema) string {
	t.Helper()
	if sc == nil {
		sc = iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	}
	meta, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file://"+dir, iceberg.Properties{table.PropertyFormatVersion: "2"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "metadata", v+"-x.metadata.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return "file://" + p
}

// fixture is one table's three metadata versions and its SyncTable.
type fixture struct {
	dir        string
	m0, m1, m2 string
	st         sink.SyncTable
}

func newFixture(t *testing.T) *fixture {
	dir := t.TempDir()
	f := &fixture{dir: dir, m0: WriteMetadata(t, dir, "00000", nil), m1: WriteMetadata(t, dir, "00001", nil), m2: WriteMetadata(t, dir, "00002", nil)}
	f.st = sink.SyncTable{Key: "Shop\x1fOrders", Ident: []string{"Shop", "Orders"}, MetadataLocation: f.m0}
	return f
}

// sync syncs the fixture's table at loc (with the location synced before
// as the previous one, as catalog sync passes it) and fails on an error.
func (f *fixture) sync(t *testing.T, m Mirror, loc string) {
	t.Helper()
	f.st.PreviousMetadataLocation, f.st.MetadataLocation = f.st.MetadataLocation, loc
	if f.st.PreviousMetadataLocation == loc {
		f.st.PreviousMetadataLocation = ""
	}
	if err := m.Sync(context.Background(), f.st); err != nil {
		t.Fatalf("syncing %s: %v", loc, err)
	}
}

func expect(t *testing.T, m Mirror, ident []string, want, what string) {
	t.Helper()
	if got := m.Location(ident); got != want {
		t.Fatalf("%s: the catalog points at %q, want %q", what, got, want)
	}
}

// Run checks what every catalog mirror must do: create the entry and its
// namespace at the first sync and follow every later version, syncing the
// same version again changes nothing, never move an entry backwards,
// overwrite an entry edited by hand, fail clearly while the catalog is down
// and catch up after, and drop only the entry it made for the table.
func Run(t *testing.T, newMirror func(t *testing.T) Mirror) {
	t.Run("creates then follows every version", func(t *testing.T) {
		m, f := newMirror(t), newFixture(t)
		for i, loc := range []string{f.m0, f.m1, f.m1, f.m2} {
			f.sync(t, m, loc)
			expect(t, m, f.st.Ident, loc, fmt.Sprintf("sync %d", i))
		}
	})
	t.Run("never backwards", func(t *testing.T) {
		m, f := newMirror(t), newFixture(t)
		f.sync(t, m, f.m2)
		f.st.MetadataLocation, f.st.PreviousMetadataLocation = f.m1, ""
		if err := m.Sync(context.Background(), f.st); err != nil {
			t.Fatalf("syncing an older version: %v", err)
		}
		expect(t, m, f.st.Ident, f.m2, "after syncing an older version")
	})
	t.Run("a hand edit is overwritten", func(t *testing.T) {
		m, f := newMirror(t), newFixture(t)
		f.sync(t, m, f.m1)
		m.Alter(f.st.Ident, WriteMetadata(t, t.TempDir(), "00000", nil))
		f.sync(t, m, f.m2)
		expect(t, m, f.st.Ident, f.m2, "after a hand edit")
	})
	t.Run("a catalog down fails, then catches up", func(t *testing.T) {
		m, f := newMirror(t), newFixture(t)
		f.sync(t, m, f.m0)
		m.SetDown(true)
		f.st.PreviousMetadataLocation, f.st.MetadataLocation = f.m0, f.m1
		err := m.Sync(context.Background(), f.st)
		m.SetDown(false)
		if err == nil {
			t.Fatal("a sync to a catalog that is down succeeded")
		}
		expect(t, m, f.st.Ident, f.m0, "after a failed sync")
		f.sync(t, m, f.m2)
		expect(t, m, f.st.Ident, f.m2, "once the catalog is back")
	})
	if probe := newMirror(t); probe.ReadsMetadata {
		t.Run("unreadable metadata fails and changes nothing", func(t *testing.T) {
			m, f := newMirror(t), newFixture(t)
			f.sync(t, m, f.m0)
			f.st.PreviousMetadataLocation, f.st.MetadataLocation = f.m0, "file://"+filepath.Join(f.dir, "metadata", "00003-missing.metadata.json")
			if err := m.Sync(context.Background(), f.st); err == nil {
				t.Fatal("syncing a missing metadata file succeeded")
			}
			expect(t, m, f.st.Ident, f.m0, "after a missing metadata file")
		})
	}
	t.Run("drops only its own entry, once", func(t *testing.T) {
		m, f := newMirror(t), newFixture(t)
		f.sync(t, m, f.m1)
		for range 2 {
			if err := m.Drop(context.Background(), f.st); err != nil {
				t.Fatalf("dropping: %v", err)
			}
			expect(t, m, f.st.Ident, "", "after a drop")
		}
		// Someone else's table under the name: not Floe's to drop.
		other := WriteMetadata(t, t.TempDir(), "00000", nil)
		if err := m.Sync(context.Background(), sink.SyncTable{Key: f.st.Key, Ident: f.st.Ident, MetadataLocation: other}); err != nil {
			t.Fatal(err)
		}
		if err := m.Drop(context.Background(), f.st); err != nil {
			t.Fatalf("dropping over another table's entry: %v", err)
		}
		expect(t, m, f.st.Ident, other, "after a drop over another table's entry")
	})
}
