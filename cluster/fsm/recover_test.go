package fsm_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"

	. "github.com/floe-io/floe/cluster/fsm"
)

// TestDecodeLossless: a snapshot this build wrote, with every kind of
// value the golden state holds, passes; one holding a field this build has
// not (as a newer leader's would) is refused, naming the field, wherever it
// sits.
func TestDecodeLossless(t *testing.T) {
	golden, err := os.ReadFile("testdata/golden/snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeLossless(golden); err != nil {
		t.Fatalf("the golden snapshot: %v", err)
	}
	if _, err := DecodeLossless(snapshotBytes(t, seeded(t))); err != nil {
		t.Fatalf("a seeded FSM's snapshot: %v", err)
	}
	for _, tc := range []struct{ name, from, to, path string }{
		{"top-level field", `"namespaces":`, `"future_index":{"a":1},"namespaces":`, "snapshot.state.future_index"},
		{"table field", `"metadata_location":`, `"branch":"audit","metadata_location":`, "snapshot.state.tables.db\x1forders.branch"},
		{"envelope field", `"version":1,`, `"version":1,"signed_by":"n9",`, "snapshot.signed_by"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := bytes.Replace(golden, []byte(tc.from), []byte(tc.to), 1)
			if bytes.Equal(data, golden) {
				t.Fatalf("%q not in the golden snapshot", tc.from)
			}
			_, err := DecodeLossless(data)
			if !errors.Is(err, ErrLossySnapshot) || !strings.Contains(err.Error(), tc.path) {
				t.Fatalf("got %v, want ErrLossySnapshot naming %q", err, tc.path)
			}
		})
	}
	// Empty values are not content: an absent field and an empty one agree.
	empty := bytes.Replace(golden, []byte(`"namespaces":`), []byte(`"future_index":{},"later":null,"flag":false,"namespaces":`), 1)
	if _, err := DecodeLossless(empty); err != nil {
		t.Fatalf("empty unknown fields: %v", err)
	}
}

// TestContentLevel: the values an older build has fields for but would
// misread raise the level a node needs to hold the state.
func TestContentLevel(t *testing.T) {
	st := NewState()
	if lv := st.ContentLevel(); lv != ProtocolBase {
		t.Fatalf("empty state at level %d", lv)
	}
	st.Tables["db\x1ft"] = &Table{Ident: []string{"db", "t"}, MetadataLocation: "s3://b/db/t/metadata/00001-a.metadata.json"}
	if lv := st.ContentLevel(); lv != ProtocolBase {
		t.Fatalf("plain metadata at level %d", lv)
	}
	part := config.Table{Topic: "t", Namespace: "n", Name: "t", Mode: config.ModeUpsert,
		PartitionBy: []config.PartitionField{{Column: "region", Transform: "identity"}}}
	st.Mappings = map[string]*Mapping{"m": {Name: "m", Table: SpecOf(part)}}
	if lv := st.ContentLevel(); lv != ProtocolPartitionedUpsert {
		t.Fatalf("a partitioned upsert mapping: level %d, want %d", lv, ProtocolPartitionedUpsert)
	}
	st.Tables["db\x1ft"].MetadataLocation = "s3://b/db/t/metadata/00002-b.gz.metadata.json"
	if lv := st.ContentLevel(); lv != ProtocolGzipMetadata {
		t.Fatalf("gzip metadata: level %d, want %d", lv, ProtocolGzipMetadata)
	}
}

// TestResume: a halted FSM takes a state at or past its halt and applies
// the entries after it; a state from before the halt is refused and
// changes nothing.
func TestResume(t *testing.T) {
	f := New(Without(CmdPauseTable))
	if ok, err := f.Resume(NewState()); ok || err != nil {
		t.Fatalf("resuming an FSM that is not halted: %v %v", ok, err)
	}
	if err := apply(t, f, 1, CreateNamespace{Parts: []string{"db"}}); err != nil {
		t.Fatal(err)
	}
	if err := apply(t, f, 2, PauseTable{Table: ledger.TableKey([]string{"db", "t"}), At: 1}); !errors.Is(err, ErrUpgradeRequired) {
		t.Fatalf("an unknown entry: %v", err)
	}
	// The leader's state: it applied the pause (a refusal, no such table)
	// and a namespace at 3.
	leader := New()
	for i, c := range []Command{CreateNamespace{Parts: []string{"db"}}, PauseTable{Table: ledger.TableKey([]string{"db", "t"}), At: 1}, CreateNamespace{Parts: []string{"x"}}} {
		_ = apply(t, leader, uint64(i+1), c)
	}
	early, err := leader.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	early.Applied = 1
	if ok, err := f.Resume(early); ok || err == nil {
		t.Fatalf("a state before the halt: %v %v", ok, err)
	}
	if _, halted := f.Halted(); !halted {
		t.Fatal("a refused resume ended the halt")
	}
	st, err := leader.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := f.Resume(st); !ok || err != nil {
		t.Fatalf("resume: %v %v", ok, err)
	}
	if _, halted := f.Halted(); halted {
		t.Fatal("still halted")
	}
	if err := apply(t, f, 4, CreateNamespace{Parts: []string{"y"}}); err != nil {
		t.Fatal(err)
	}
	f.Read(func(s *State) {
		if s.Applied != 4 || s.Namespaces["x"] == nil || s.Namespaces["y"] == nil {
			t.Fatalf("after resume: applied %d, namespaces %v", s.Applied, s.Namespaces)
		}
	})
}
