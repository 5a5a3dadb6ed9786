package fsm_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/config"

	. "github.com/floe-io/floe/cluster/fsm"
)

// TestDeltaSettingsAreGated: a mapping that sets delta.checkpoint_interval
// or delta.log_retention needs every member at ProtocolTableSettings (an
// older committer would checkpoint and clean the log at its fixed 10
// versions and 30 days), so the gate refuses its PutMapping while a
// level-3 member is registered; without them the mapping keeps the bytes
// an older node writes.
func TestDeltaSettingsAreGated(t *testing.T) {
	f := New()
	idx := uint64(0)
	register := func(m Member) {
		idx++
		if err := apply(t, f, idx, RegisterNode{Node: m}); err != nil {
			t.Fatal(err)
		}
	}
	register(Member{ID: "a", ProposalIDs: true, Protocol: ProtocolTableSettings})
	register(Member{ID: "b", ProposalIDs: true, Protocol: ProtocolGating})
	table := func(d config.DeltaSettings) TableSpec {
		return SpecOf(config.Table{Topic: "t", Namespace: "n", Name: "t", Delta: d})
	}
	for _, tc := range []struct {
		name    string
		spec    TableSpec
		refused bool
	}{
		{"unset", table(config.DeltaSettings{}), false},
		{"checkpoint_interval", table(config.DeltaSettings{CheckpointInterval: 5}), true},
		{"log_retention", table(config.DeltaSettings{LogRetention: config.Duration(48 * time.Hour)}), true},
	} {
		_, err := f.GateCommand(PutMapping{Mapping: Mapping{Name: "m", Table: tc.spec}, Create: true}, ProtocolLevel)
		switch {
		case tc.refused && (!errors.Is(err, ErrProtocolTooLow) || !strings.Contains(err.Error(), "b at level 3")):
			t.Fatalf("%s with a level-3 member: %v, want a refusal naming b", tc.name, err)
		case !tc.refused && err != nil:
			t.Fatalf("%s: %v", tc.name, err)
		}
		if b, _ := json.Marshal(tc.spec); !tc.refused && strings.Contains(string(b), "Delta") {
			t.Fatalf("%s: unset settings change the bytes: %s", tc.name, b)
		}
	}
	register(Member{ID: "b", ProposalIDs: true, Protocol: ProtocolTableSettings})
	set := table(config.DeltaSettings{CheckpointInterval: 5, LogRetention: config.Duration(48 * time.Hour)})
	if _, err := f.GateCommand(PutMapping{Mapping: Mapping{Name: "m", Table: set}}, ProtocolLevel); err != nil {
		t.Fatalf("every member at level 4: %v", err)
	}
	b, _ := json.Marshal(set)
	var back TableSpec
	if err := json.Unmarshal(b, &back); err != nil || back.Config().Delta != set.Config().Delta || back.Config().Delta.CheckpointInterval != 5 ||
		back.Config().Delta.LogRetention.D() != 48*time.Hour {
		t.Fatalf("round trip of %s: %+v, %v", b, back, err)
	}
}
