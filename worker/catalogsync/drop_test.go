package catalogsync

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

// dropSyncer is a fakeSyncer that can drop entries (a Dropper).
type dropSyncer struct {
	*fakeSyncer
	mu      sync.Mutex
	dropped []sink.SyncTable
}

func (d *dropSyncer) Sync(ctx context.Context, t sink.SyncTable) error {
	return d.fakeSyncer.Sync(ctx, t)
}

func (d *dropSyncer) Drop(_ context.Context, t sink.SyncTable) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dropped = append(d.dropped, t)
	return nil
}

func (d *dropSyncer) drops() []sink.SyncTable {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.dropped)
}

// TestCatalogSyncDeltaOnly: a [delta] table is published only as Delta:
// an Iceberg catalog never mirrors a table that was always [delta], drops
// (once, recording Dropped) the entry it made when [iceberg, delta] turns
// [delta], mirrors none of its later commits, and syncs it again when
// iceberg comes back; the Delta catalog follows the table throughout.
func TestCatalogSyncDeltaOnly(t *testing.T) {
	st := newSyncState()
	only, both := "db\x1fonly", "db\x1fboth"
	for _, k := range []string{only, both} {
		st.assign(k, ledger.Assignment{Node: "n1", Epoch: 1})
		st.commit(k, k+"/00000.metadata.json")
	}
	st.setFormats(only, "delta")
	st.setFormats(both, "iceberg", "delta")
	glue := &dropSyncer{fakeSyncer: &fakeSyncer{name: "glue"}}
	dl := formatSyncer{fakeSyncer: &fakeSyncer{name: "glue-delta"}, format: "delta"}
	startSync(t, st, "n1", 10*time.Millisecond, glue, dl)
	syncEventually(t, "both tables in glue-delta, the [iceberg, delta] one in glue", func() bool {
		return st.synced(only, "glue-delta") != "" && st.synced(both, "glue-delta") != "" && st.synced(both, "glue") != ""
	})

	st.setFormats(both, "delta")
	st.commit(both, both+"/00001.metadata.json")
	syncEventually(t, "the Iceberg entry dropped and recorded", func() bool { return st.synced(both, "glue") == Dropped })
	syncEventually(t, "glue-delta current", func() bool { return st.synced(both, "glue-delta") == both+"/00001.metadata.json" })
	if d := glue.drops(); len(d) != 1 || d[0].Key != both || d[0].MetadataLocation != both+"/00000.metadata.json" {
		t.Fatalf("drops %+v, want one of %s's entry at the location last synced", d, both)
	}
	for _, c := range glue.calls() {
		if c.Key == only || c.MetadataLocation == both+"/00001.metadata.json" {
			t.Fatalf("glue mirrored a [delta] table's commit: %+v", c)
		}
	}
	if got := st.synced(only, "glue"); got != "" {
		t.Fatalf("a table that was always [delta] has a glue record %q", got)
	}

	// Iceberg again: the entry is made again at the current location.
	st.setFormats(both, "iceberg", "delta")
	syncEventually(t, "glue synced again", func() bool { return st.synced(both, "glue") == both+"/00001.metadata.json" })
	if d := glue.drops(); len(d) != 1 {
		t.Fatalf("%d drops, want the one", len(d))
	}
}

// TestCatalogSyncUnknownFormats: a table whose formats the node does not
// know (nil: no mapping routes into it, or not yet) is mirrored by an
// Iceberg catalog as it was last: kept in sync when the record says it was
// synced, left alone when it never was or was dropped, so a restarted node
// neither re-creates a dropped entry nor publishes a [delta] table.
func TestCatalogSyncUnknownFormats(t *testing.T) {
	st := newSyncState()
	synced, never, dropped := "db\x1fsynced", "db\x1fnever", "db\x1fdropped"
	for _, k := range []string{synced, never, dropped} {
		st.assign(k, ledger.Assignment{Node: "n1", Epoch: 1})
		st.commit(k, k+"/00001.metadata.json")
		st.setFormats(k)
	}
	st.tables[synced].Synced["glue"] = SyncedAt{MetadataLocation: synced + "/00000.metadata.json"}
	st.tables[dropped].Synced["glue"] = SyncedAt{MetadataLocation: Dropped}
	glue := &dropSyncer{fakeSyncer: &fakeSyncer{name: "glue"}}
	startSync(t, st, "n1", 10*time.Millisecond, glue)
	syncEventually(t, "the table synced before kept in sync", func() bool { return st.synced(synced, "glue") == synced+"/00001.metadata.json" })
	for _, c := range glue.calls() {
		if c.Key != synced {
			t.Fatalf("a table of unknown formats that was not synced before was mirrored: %+v", c)
		}
	}
	if d := glue.drops(); len(d) != 0 {
		t.Fatalf("drops %+v of tables of unknown formats", d)
	}
	if got := st.synced(dropped, "glue"); got != Dropped {
		t.Fatalf("dropped table's record %q", got)
	}
}
