package raftnode

import (
	"errors"
	"strings"
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
		data, err := n.encode(fsm.RemoveNode{ID: "m"})
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
	a, _ := n.encode(fsm.RemoveNode{ID: "m"})
	b, _ := n.encode(fsm.RemoveNode{ID: "m"})
	if fsm.ProposalID(a) == fsm.ProposalID(b) {
		t.Fatal("two proposals share an id")
	}
}

// TestProposerGate: the proposer refuses a command whose level is above the
// group's minimum, naming the command, the level and the lagging member,
// and proposes it once that member re-registers at the level; it frames
// ignorable commands with the bit only once every member strips it.
func TestProposerGate(t *testing.T) {
	n := &Node{cfg: NodeConfig{ID: "a"}, fsm: fsm.New(fsm.WithLevel(fsm.CmdPauseTable, fsm.ProtocolGating))}
	idx := uint64(0)
	register := func(m fsm.Member) {
		idx++
		data, err := fsm.Encode(fsm.RegisterNode{Node: m})
		if err != nil {
			t.Fatal(err)
		}
		if err := n.fsm.Apply(idx, data); err != nil {
			t.Fatal(err)
		}
	}
	register(fsm.Member{ID: "a", ProposalIDs: true, Protocol: fsm.ProtocolLevel})
	register(fsm.Member{ID: "old", ProposalIDs: true}) // a node of the build before protocol levels

	_, err := n.encode(fsm.PauseTable{Table: "t"})
	if !errors.Is(err, fsm.ErrProtocolTooLow) || IsRetryable(err) {
		t.Fatalf("PauseTable with a level-2 member: %v", err)
	}
	for _, want := range []string{"PauseTable", "level 3", "old at level 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	// The refusal crosses the internal RPC with its sentinel.
	if w := fromWire(toWire(err)); !errors.Is(w, fsm.ErrProtocolTooLow) {
		t.Errorf("over the wire: %v", w)
	}
	synced, err := n.encode(fsm.BackupWritten{Location: "b", At: 1})
	if err != nil || synced[0] != byte(fsm.CmdBackupWritten) || fsm.ProposalID(synced) == "" {
		t.Fatalf("BackupWritten at level 2: type byte %d, id %q, %v", synced[0], fsm.ProposalID(synced), err)
	}

	register(fsm.Member{ID: "old", ProposalIDs: true, Protocol: fsm.ProtocolLevel}) // upgraded
	data, err := n.encode(fsm.PauseTable{Table: "t"})
	if err != nil || data[0] != byte(fsm.CmdPauseTable) {
		t.Fatalf("PauseTable once every member is at level 3: %v", err)
	}
	synced, _ = n.encode(fsm.BackupWritten{Location: "b", At: 1})
	if synced[0] != byte(fsm.CmdBackupWritten|fsm.IgnorableFlag) {
		t.Fatalf("BackupWritten at level 3: type byte %d, want the ignorable bit", synced[0])
	}
}
