package fsm_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	. "github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/config"
)

// TestUpsertMappingGated: a mapping in mode upsert (or with a key) needs
// protocol level 4, so a PutMapping setting it is refused while a level-3
// member is registered (it would write the table as append), and passes
// once that member is at level 4. An append mapping, the mode named or
// left out, keeps the bytes an older node writes and is not gated.
func TestUpsertMappingGated(t *testing.T) {
	f := New()
	idx := uint64(0)
	register := func(m Member) {
		idx++
		if err := apply(t, f, idx, RegisterNode{Node: m}); err != nil {
			t.Fatal(err)
		}
	}
	register(Member{ID: "a", ProposalIDs: true, Protocol: ProtocolLevel})
	register(Member{ID: "b", ProposalIDs: true, Protocol: ProtocolGating})
	put := func(tbl config.Table) PutMapping {
		return PutMapping{Mapping: Mapping{Name: "m", Table: SpecOf(tbl)}, Create: true}
	}
	base := config.Table{Topic: "t", Namespace: "db"}
	for _, tc := range []struct {
		name  string
		mode  string
		key   []string
		gated bool
	}{
		{"mode left out", "", nil, false},
		{"mode append", config.ModeAppend, nil, false},
		{"mode upsert by the Kafka key", config.ModeUpsert, nil, true},
		{"mode upsert by fields", config.ModeUpsert, []string{"id", "region"}, true},
	} {
		tbl := base
		tbl.Mode, tbl.Key = tc.mode, tc.key
		_, err := f.GateCommand(put(tbl), ProtocolLevel)
		var pe *ProtocolError
		if gated := errors.As(err, &pe); gated != tc.gated {
			t.Fatalf("%s: gate %v, want gated %v", tc.name, err, tc.gated)
		}
		if tc.gated && !strings.Contains(err.Error(), "lagging: b at level 3") {
			t.Fatalf("%s: refusal %q does not name b", tc.name, err)
		}
		spec := SpecOf(tbl)
		raw, _ := json.Marshal(spec)
		if !tc.gated {
			if old, _ := json.Marshal(SpecOf(base)); string(raw) != string(old) {
				t.Fatalf("%s: bytes %s, want the older node's %s", tc.name, raw, old)
			}
			continue
		}
		if back := spec.Config(); back.Mode != tc.mode || !slices.Equal(back.Key, tc.key) {
			t.Fatalf("%s: round trip gave mode %q key %v", tc.name, back.Mode, back.Key)
		}
	}
	register(Member{ID: "b", ProposalIDs: true, Protocol: ProtocolLevel})
	if _, err := f.GateCommand(put(config.Table{Topic: "t", Namespace: "db", Mode: config.ModeUpsert}), ProtocolLevel); err != nil {
		t.Fatalf("every member at level 4: %v", err)
	}
}
