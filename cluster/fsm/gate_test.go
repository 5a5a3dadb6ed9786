package fsm_test

import (
	"errors"
	"strings"
	"testing"

	. "github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// TestMemberLevel: a member of a build before the protocol field is placed
// by what it registered: proposal_ids is the build of the proposal ids,
// nothing the oldest supported build.
func TestMemberLevel(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Member
		want int
	}{
		{"before proposal ids", Member{ID: "a"}, ProtocolBase},
		{"proposal ids, no protocol field", Member{ID: "a", ProposalIDs: true}, ProtocolProposalIDs},
		{"this build", Member{ID: "a", ProposalIDs: true, Protocol: ProtocolLevel}, ProtocolLevel},
		{"a newer build", Member{ID: "a", ProposalIDs: true, Protocol: ProtocolLevel + 1}, ProtocolLevel + 1},
	} {
		if got := tc.m.Level(); got != tc.want {
			t.Errorf("%s: level %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestGateRefusesUntilEveryMemberIsAtTheLevel: a command that needs a level
// is refused, naming the command, the level and the lagging members, until
// the last of them re-registers at that level.
func TestGateRefusesUntilEveryMemberIsAtTheLevel(t *testing.T) {
	f := New(WithLevel(CmdPauseTable, ProtocolGating))
	idx := uint64(0)
	register := func(m Member) {
		idx++
		if err := apply(t, f, idx, RegisterNode{Node: m}); err != nil {
			t.Fatal(err)
		}
	}
	register(Member{ID: "a", ProposalIDs: true, Protocol: ProtocolGating})
	register(Member{ID: "b", ProposalIDs: true})
	register(Member{ID: "c"})

	level, err := f.Gate(CmdPauseTable, ProtocolLevel)
	var pe *ProtocolError
	if !errors.As(err, &pe) || !errors.Is(err, ErrProtocolTooLow) || level != ProtocolBase {
		t.Fatalf("gate = %d, %v; want a protocol error at level %d", level, err, ProtocolBase)
	}
	want := "PauseTable needs protocol level 3; the group's minimum is 1 (lagging: b at level 2, c at level 1): finish the rolling upgrade first"
	if err.Error() != want {
		t.Fatalf("refusal %q\nwant     %q", err, want)
	}
	// Commands of the base level pass, framed for the base level; those
	// that builds of the base level may predate do not.
	if _, err := f.Gate(CmdRequestSchema, ProtocolLevel); !errors.Is(err, ErrProtocolTooLow) || !strings.Contains(err.Error(), "lagging: c at level 1") {
		t.Fatalf("RequestSchema with a level-1 member: %v", err)
	}
	if level, err := f.Gate(CmdCreateNamespace, ProtocolLevel); err != nil || level != ProtocolBase {
		t.Fatalf("base command: %d, %v", level, err)
	}
	register(Member{ID: "c", Protocol: ProtocolGating})
	if _, err := f.Gate(CmdPauseTable, ProtocolLevel); !errors.Is(err, ErrProtocolTooLow) {
		t.Fatalf("with b still lagging: %v", err)
	}
	register(Member{ID: "b", Protocol: ProtocolGating})
	if level, err := f.Gate(CmdPauseTable, ProtocolLevel); err != nil || level != ProtocolGating {
		t.Fatalf("every member at level 3: %d, %v", level, err)
	}
	// The proposer's own level counts before its record is applied.
	if _, err := f.Gate(CmdPauseTable, ProtocolBase); !errors.Is(err, ErrProtocolTooLow) {
		t.Fatalf("proposer at the base level: %v", err)
	}
	if _, err := New(Without(CmdPauseTable)).Gate(CmdPauseTable, ProtocolLevel); !errors.Is(err, ErrUnknownCommand) {
		t.Fatalf("a command this build lacks: %v", err)
	}
}

// TestFramingFollowsTheGroupLevel: the ignorable bit is set only once every
// member strips it (below, an older node would skip a command it knows),
// and proposal ids only once every member deduplicates; below both levels
// the bytes are those of the oldest supported build.
func TestFramingFollowsTheGroupLevel(t *testing.T) {
	c := BackupWritten{Location: "file:///b.json", Applied: 3, At: 4}
	for _, tc := range []struct {
		level int
		id    string
		typ   byte
	}{
		{ProtocolBase, "", byte(CmdBackupWritten)},
		{ProtocolProposalIDs, "p1", byte(CmdBackupWritten)},
		{ProtocolGating, "p1", byte(CmdBackupWritten | IgnorableFlag)},
	} {
		data, err := EncodeFor(tc.level, tc.id, c)
		if err != nil {
			t.Fatal(err)
		}
		if data[0] != tc.typ || ProposalID(data) != tc.id {
			t.Errorf("level %d: type byte %d id %q, want %d %q", tc.level, data[0], ProposalID(data), tc.typ, tc.id)
		}
	}
	if _, err := EncodeFor(ProtocolBase, "p1", c); err == nil {
		t.Error("a proposal id framed for a group below proposal ids")
	}
	// A non-ignorable command keeps its byte at every level.
	data, _ := EncodeFor(ProtocolGating, "", RecordFiles{Table: "t"})
	if data[0] != byte(CmdRecordFiles) {
		t.Errorf("RecordFiles framed with type byte %d", data[0])
	}
}

// TestGateRefusesDeltaCommitsBelowTableSettings: a commit that records a
// Delta version is refused while a member is below level 4 (it would drop
// the record and diverge); the same commit without one passes.
func TestGateRefusesDeltaCommitsBelowTableSettings(t *testing.T) {
	f := New()
	if err := apply(t, f, 1, RegisterNode{Node: Member{ID: "a", ProposalIDs: true, Protocol: ProtocolTableSettings}}); err != nil {
		t.Fatal(err)
	}
	if err := apply(t, f, 2, RegisterNode{Node: Member{ID: "b", ProposalIDs: true, Protocol: ProtocolGating}}); err != nil {
		t.Fatal(err)
	}
	plain := CommitTables{Swaps: []TableSwap{{Table: "t", Expected: "a", New: "b"}}, Table: "t"}
	if _, err := f.GateCommand(plain, ProtocolLevel); err != nil {
		t.Fatalf("a commit without delta: %v", err)
	}
	withDelta := plain
	withDelta.Delta = &ledger.DeltaCommit{Sequence: 1, Version: 0}
	if _, err := f.GateCommand(withDelta, ProtocolLevel); !errors.Is(err, ErrProtocolTooLow) || !strings.Contains(err.Error(), "b at level 3") {
		t.Fatalf("a delta commit with a level-3 member: %v", err)
	}
}
