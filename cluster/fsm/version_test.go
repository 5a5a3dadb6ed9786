package fsm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	. "github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
)

// stateJSON is the whole state as JSON: Snapshot refuses while halted, so
// the tests compare states this way.
func stateJSON(t interface{ Fatal(...any) }, f *FSM) []byte {
	var out []byte
	var err error
	f.Read(func(s *State) { out, err = json.Marshal(s) })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func raw(typ byte, payload string) []byte { return append([]byte{typ}, payload...) }

// TestUnknownCommand: an unknown type with the ignorable bit is skipped and
// counted; one without it halts the FSM, which then changes nothing (not
// even the applied index), answers every entry with ErrUpgradeRequired,
// refuses to snapshot and says so once at ERROR.
func TestUnknownCommand(t *testing.T) {
	catalogSynced, err := Encode(CatalogSynced{Table: "db\x1forders", Catalog: "glue", MetadataLocation: "file:///w/db/orders/metadata/00000-a.metadata.json"})
	if err != nil {
		t.Fatal(err)
	}
	if catalogSynced[0] != byte(CmdCatalogSynced|IgnorableFlag) {
		t.Fatalf("CatalogSynced framed with type byte %d, want the ignorable bit", catalogSynced[0])
	}
	for _, tc := range []struct {
		name    string
		entry   []byte
		halts   bool
		skipped uint64
	}{
		{"unknown, ignorable", raw(byte(IgnorableFlag)|100, `{"future":true}`), false, 1},
		{"unknown, not ignorable", raw(100, `{"future":true}`), true, 0},
		{"known, ignorable bit stripped to dispatch", catalogSynced, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := seeded(t)
			var logs bytes.Buffer
			a := raftnode.NewRaftFSM(f, slog.New(slog.NewTextHandler(&logs, nil)))
			before := stateJSON(t, f)
			res := a.Apply(&raft.Log{Index: 50, Type: raft.LogCommand, Data: tc.entry}).(ApplyResult)
			h, halted := f.Halted()
			if halted != tc.halts || errors.Is(res.Err, ErrUpgradeRequired) != tc.halts {
				t.Fatalf("halted %v (%+v), err %v; want halted %v", halted, h, res.Err, tc.halts)
			}
			if !tc.halts {
				if res.Err != nil {
					t.Fatal(res.Err)
				}
				f.Read(func(s *State) {
					if s.Skipped != tc.skipped || s.Applied != 50 {
						t.Fatalf("skipped %d applied %d", s.Skipped, s.Applied)
					}
				})
				return
			}
			if h.Index != 50 || h.Type != 100 || !strings.Contains(h.Error(), "upgrade required") {
				t.Fatalf("halt %+v: %v", h, h)
			}
			// Later entries, known or not, change nothing.
			later, _ := Encode(CreateNamespace{Parts: []string{"later"}})
			for i, e := range [][]byte{later, raw(100, `{}`), catalogSynced} {
				if res := a.Apply(&raft.Log{Index: uint64(51 + i), Type: raft.LogCommand, Data: e}).(ApplyResult); !errors.Is(res.Err, ErrUpgradeRequired) {
					t.Fatalf("entry %d after the halt: %v", 51+i, res.Err)
				}
			}
			if after := stateJSON(t, f); !bytes.Equal(before, after) {
				t.Fatalf("a halted FSM changed its state:\n%s\n%s", before, after)
			}
			if _, err := f.Snapshot(); !errors.Is(err, ErrUpgradeRequired) {
				t.Fatalf("snapshot while halted: %v", err)
			}
			if err := f.WaitApplied(context.Background(), 53); !errors.Is(err, ErrUpgradeRequired) {
				t.Fatalf("WaitApplied while halted: %v", err)
			}
			if n := strings.Count(logs.String(), "level=ERROR msg=\"upgrade required"); n != 1 {
				t.Fatalf("%d ERROR lines about the halt, want 1:\n%s", n, logs.String())
			}
		})
	}
}

// TestHaltedNodeCatchesUpAfterUpgrade: a node whose build lacks PauseTable
// halts at the pause; restarted on the full build from its last snapshot
// (taken before the halt) and fed the same log, it reaches the state of a
// peer that knew the command all along.
func TestHaltedNodeCatchesUpAfterUpgrade(t *testing.T) {
	var log [][]byte
	add := func(c Command) {
		data, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, data)
	}
	add(RegisterNode{Node: Member{ID: "n1", Protocol: ProtocolLevel}})
	add(CreateNamespace{Parts: []string{"db"}})
	add(CreateTable{Ident: []string{"db", "t"}, MetadataLocation: "file:///m0.json"})
	add(PauseTable{Table: "db\x1ft", At: 7})
	add(CreateNamespace{Parts: []string{"after"}})
	add(BackupWritten{Location: "file:///b.json", Applied: 5, At: 8})

	peer, old := New(), New(Without(CmdPauseTable))
	var snap []byte
	for i, e := range log {
		idx := uint64(i + 1)
		if err := peer.Apply(idx, e); err != nil {
			t.Fatalf("peer, entry %d: %v", idx, err)
		}
		err := old.Apply(idx, e)
		if idx < 4 {
			if err != nil {
				t.Fatalf("old, entry %d: %v", idx, err)
			}
			snap = snapshotBytes(t, old) // Raft's last snapshot before the halt
		} else if !errors.Is(err, ErrUpgradeRequired) {
			t.Fatalf("old, entry %d: %v; want upgrade required", idx, err)
		}
	}
	if h, _ := old.Halted(); h.Index != 4 || h.Type != CmdPauseTable {
		t.Fatalf("halt %+v, want entry 4, PauseTable", h)
	}
	upgraded := New()
	if err := upgraded.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	for i := 3; i < len(log); i++ {
		if err := upgraded.Apply(uint64(i+1), log[i]); err != nil {
			t.Fatalf("upgraded, entry %d: %v", i+1, err)
		}
	}
	if a, b := snapshotBytes(t, peer), snapshotBytes(t, upgraded); !bytes.Equal(a, b) {
		t.Fatalf("upgraded node differs from its peer:\n%s\n%s", a, b)
	}
}

// TestRestoreKeepsHalt: a snapshot installed into a halted FSM (a newer
// leader's InstallSnapshot) does not end the halt, even one that covers the
// entry: it was written by a build that knows the command and may hold
// state this build cannot read. Only a restart on a newer build does.
func TestRestoreKeepsHalt(t *testing.T) {
	pause, _ := Encode(PauseTable{Table: "db\x1forders", At: 1})
	peer := seeded(t)
	before := snapshotBytes(t, peer)
	if err := peer.Apply(7, pause); err != nil {
		t.Fatal(err)
	}
	after := snapshotBytes(t, peer)
	old := New(Without(CmdPauseTable))
	if err := old.Restore(bytes.NewReader(before)); err != nil {
		t.Fatal(err)
	}
	if err := old.Apply(7, pause); !errors.Is(err, ErrUpgradeRequired) {
		t.Fatalf("pause on the old build: %v", err)
	}
	if err := old.Restore(bytes.NewReader(after)); err != nil {
		t.Fatal(err)
	}
	if _, halted := old.Halted(); !halted {
		t.Fatal("a restore ended the halt")
	}
	later, _ := Encode(CreateNamespace{Parts: []string{"later"}})
	if err := old.Apply(8, later); !errors.Is(err, ErrUpgradeRequired) {
		t.Fatalf("an entry after the restore: %v", err)
	}
}
