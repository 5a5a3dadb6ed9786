package fsm_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/floe-io/floe/config"

	. "github.com/floe-io/floe/cluster/fsm"
)

// TestStorageClassIsGated: a mapping that sets storage_class needs every
// member at ProtocolTableSettings (an older build would drop the class and
// write data files in the bucket's default), so the gate refuses its
// PutMapping while a level-3 member is registered; the same mapping
// without it is proposed as before, and keeps the bytes an older node
// writes (no StorageClass key).
func TestStorageClassIsGated(t *testing.T) {
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

	plain := SpecOf(config.Table{Topic: "clicks", Namespace: "web", Name: "clicks"})
	classed := SpecOf(config.Table{Topic: "clicks", Namespace: "web", Name: "clicks", StorageClass: "INTELLIGENT_TIERING"})
	for _, tc := range []struct {
		name    string
		spec    TableSpec
		refused bool
	}{
		{"without storage_class", plain, false},
		{"with storage_class", classed, true},
	} {
		_, err := f.GateCommand(PutMapping{Mapping: Mapping{Name: "clicks", Table: tc.spec}, Create: true}, ProtocolLevel)
		switch {
		case tc.refused && (!errors.Is(err, ErrProtocolTooLow) || !strings.Contains(err.Error(), "b at level 3")):
			t.Fatalf("%s with a level-3 member: %v, want a refusal naming b", tc.name, err)
		case !tc.refused && err != nil:
			t.Fatalf("%s: %v", tc.name, err)
		}
	}
	register(Member{ID: "b", ProposalIDs: true, Protocol: ProtocolTableSettings})
	if _, err := f.GateCommand(PutMapping{Mapping: Mapping{Name: "clicks", Table: classed}}, ProtocolLevel); err != nil {
		t.Fatalf("every member at level 4: %v", err)
	}

	b, _ := json.Marshal(plain)
	if strings.Contains(string(b), "StorageClass") {
		t.Fatalf("unset storage_class encoded: %s", b)
	}
	b, _ = json.Marshal(classed)
	var back TableSpec
	if err := json.Unmarshal(b, &back); err != nil || back.Config().StorageClass != "INTELLIGENT_TIERING" || back.Level() != ProtocolTableSettings {
		t.Fatalf("round trip of %s: %+v, %v", b, back, err)
	}
}
