package raftnode

import (
	"testing"

	"github.com/floe-io/floe/cluster/fsm"
)

// TestProposalIDsOnlyWhenEveryMemberDedupes: a proposal carries an id only
// once this node is registered and every member registered that it
// deduplicates by id; during a rolling upgrade from a version without ids
// an older member would apply a resend that the others skip.
func TestProposalIDsOnlyWhenEveryMemberDedupes(t *testing.T) {
	n := &Node{cfg: NodeConfig{ID: "a"}, fsm: fsm.New()}
	register := func(idx uint64, m fsm.Member) {
		data, err := fsm.Encode(fsm.RegisterNode{Node: m})
		if err != nil {
			t.Fatal(err)
		}
		if err := n.fsm.Apply(idx, data); err != nil {
			t.Fatal(err)
		}
	}
	hasID := func() bool {
		data, err := n.encode(fsm.DeleteMapping{Name: "m"})
		if err != nil {
			t.Fatal(err)
		}
		return fsm.ProposalID(data) != ""
	}
	if hasID() {
		t.Fatal("an id before this node is registered")
	}
	register(1, fsm.Member{ID: "a", ProposalIDs: true})
	register(2, fsm.Member{ID: "old", Version: "older"})
	if hasID() {
		t.Fatal("an id while a member does not deduplicate")
	}
	register(3, fsm.Member{ID: "old", ProposalIDs: true})
	if !hasID() {
		t.Fatal("no id once every member deduplicates")
	}
	a, _ := n.encode(fsm.DeleteMapping{Name: "m"})
	b, _ := n.encode(fsm.DeleteMapping{Name: "m"})
	if fsm.ProposalID(a) == fsm.ProposalID(b) {
		t.Fatal("two proposals share an id")
	}
}
