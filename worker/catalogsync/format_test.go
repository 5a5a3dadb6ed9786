package catalogsync

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

// formatSyncer is a fakeSyncer that mirrors one table format only.
type formatSyncer struct {
	*fakeSyncer
	format string
}

func (f formatSyncer) Format() string { return f.format }

func (f formatSyncer) Sync(ctx context.Context, t sink.SyncTable) error {
	return f.fakeSyncer.Sync(ctx, t)
}

func (s *syncState) setFormats(key string, formats ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables[key].Formats = formats
	s.changed(key)
}

// TestCatalogSyncFormats: a FormatCatalog mirrors only the tables written
// in its format, starts when a table gains the format and stops when it
// loses it; a plain catalog mirrors every table.
func TestCatalogSyncFormats(t *testing.T) {
	st := newSyncState()
	ice, both := "db\x1fice", "db\x1fboth"
	for _, k := range []string{ice, both} {
		st.assign(k, ledger.Assignment{Node: "n1", Epoch: 1})
		st.commit(k, k+"/00000.metadata.json")
	}
	st.setFormats(ice, "iceberg")
	st.setFormats(both, "iceberg", "delta")
	glue := &fakeSyncer{name: "glue"}
	dl := formatSyncer{fakeSyncer: &fakeSyncer{name: "glue-delta"}, format: "delta"}
	cs := startSync(t, st, "n1", 10*time.Millisecond, glue, dl)
	syncEventually(t, "every table in glue and the delta table in glue-delta", func() bool {
		return st.synced(ice, "glue") != "" && st.synced(both, "glue") != "" && st.synced(both, "glue-delta") == both+"/00000.metadata.json"
	})
	keys := func(f *fakeSyncer) []string {
		var out []string
		for _, c := range f.calls() {
			if !slices.Contains(out, c.Key) {
				out = append(out, c.Key)
			}
		}
		return out
	}
	if got := keys(dl.fakeSyncer); !slices.Equal(got, []string{both}) {
		t.Fatalf("glue-delta synced %q, want only the delta table", got)
	}
	if _, ok := cs.Status()[ice]["glue-delta"]; ok {
		t.Fatal("an iceberg-only table has a glue-delta status")
	}

	// Delta turned on for the Iceberg table: its Delta entry follows.
	st.setFormats(ice, "iceberg", "delta")
	syncEventually(t, "the table turned delta synced", func() bool { return st.synced(ice, "glue-delta") == ice+"/00000.metadata.json" })

	// Turned off: its loop ends and later commits are not mirrored as Delta.
	st.setFormats(both, "iceberg")
	st.commit(both, both+"/00001.metadata.json")
	syncEventually(t, "glue current", func() bool { return st.synced(both, "glue") == both+"/00001.metadata.json" })
	for _, c := range dl.calls() {
		if c.Key == both && c.MetadataLocation == both+"/00001.metadata.json" {
			t.Fatalf("a table without delta was mirrored as delta: %+v", c)
		}
	}
}
