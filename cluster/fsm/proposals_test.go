package fsm_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/hashicorp/raft"

	. "github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
)

// proposal encodes c with proposal id id, as a node's Apply does.
func proposal(t testing.TB, id string, c Command) []byte {
	t.Helper()
	data, err := EncodeProposal(id, c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// applyData applies encoded bytes at idx through the Raft adapter.
func applyData(f *FSM, idx uint64, data []byte) error {
	return raftnode.NewRaftFSM(f, nil).Apply(&raft.Log{Index: idx, Type: raft.LogCommand, Data: data}).(ApplyResult).Err
}

func sameAnswer(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}

// TestResentProposalAppliesOnce: a proposal applied twice (its answer was
// lost and the proposer resent it) changes the state once, and the second
// answers like the first. Without the window the second DeleteMapping says
// "no such mapping", CreateNamespace "already exists", RecordFiles
// "overlap" and CommitTables "commit failed".
func TestResentProposalAppliesOnce(t *testing.T) {
	key := ledger.TableKey([]string{"db", "orders"})
	tp := ledger.TopicPartition{Topic: "orders", Partition: 0}
	cases := []struct {
		name    string
		cmd     Command
		applied func(*State) bool
	}{
		{"DeleteMapping", DeleteMapping{Name: "m"}, func(s *State) bool { return s.Mappings["m"] == nil }},
		{"CreateNamespace", CreateNamespace{Parts: []string{"new"}}, func(s *State) bool { return s.Namespaces["new"] != nil }},
		{"RecordFiles", RecordFiles{Table: key, Entry: ledger.Entry{ID: "e2", Node: "n1", Records: 5,
			Files:  []ledger.FileDescriptor{{Path: "file:///w/db/orders/data/b.parquet", Format: "PARQUET", RecordCount: 5, SizeBytes: 50}},
			Ranges: []ledger.Range{{TopicPartition: tp, From: 10, To: 15, Epoch: 1}}}},
			func(s *State) bool { return len(s.Ledger.Pending[key]) == 2 }},
		{"CommitTables", CommitTables{Swaps: []TableSwap{{Table: key, Expected: "file:///w/db/orders/metadata/00000-a.metadata.json", New: "file:///w/db/orders/metadata/00001-b.metadata.json"}},
			Table: key, Entries: []string{"e1"}, Committer: &ledger.Assignment{Node: "n1", Epoch: 1}, At: 5},
			func(s *State) bool { return len(s.Ledger.Pending[key]) == 0 && s.Tables[key].Commits == 1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := seeded(t)
			if err := apply(t, f, 50, PutMapping{Mapping: Mapping{Name: "m", Table: SpecOf(config.Table{Topic: "x", Namespace: "db"})}, Create: true}); err != nil {
				t.Fatal(err)
			}
			data := proposal(t, "p-"+c.name, c.cmd)
			first := applyData(f, 100, data)
			if first != nil {
				t.Fatalf("first apply: %v", first)
			}
			f.Read(func(s *State) {
				if !c.applied(s) {
					t.Fatalf("the first apply changed nothing")
				}
			})
			once := snapshotBytes(t, f)
			second := applyData(f, 101, data)
			if !sameAnswer(first, second) {
				t.Fatalf("the resend answers %v, the first answered %v", second, first)
			}
			twice := snapshotBytes(t, f)
			if want := bytes.Replace(once, []byte(`"applied":100`), []byte(`"applied":101`), 1); !bytes.Equal(want, twice) {
				t.Fatalf("the resend changed the state:\n%s\n%s", once, twice)
			}
		})
	}
}

// TestResentRefusalAnswersTheSame: a proposal refused the first time
// answers the same refusal (message and sentinel) when resent, even if it
// would now apply: here the mapping it failed to delete exists meanwhile,
// and the resend must not delete it.
func TestResentRefusalAnswersTheSame(t *testing.T) {
	f := NewFSM(nil)
	del := proposal(t, "del-1", DeleteMapping{Name: "m"})
	first := applyData(f, 1, del)
	if !errors.Is(first, ErrNoSuchMapping) {
		t.Fatalf("first delete = %v", first)
	}
	if err := applyData(f, 2, proposal(t, "put-1", PutMapping{Mapping: Mapping{Name: "m"}, Create: true})); err != nil {
		t.Fatal(err)
	}
	second := applyData(f, 3, del)
	if !errors.Is(second, ErrNoSuchMapping) || !sameAnswer(first, second) || IsRetryable(second) {
		t.Fatalf("resent delete = %v, first answered %v", second, first)
	}
	f.Read(func(s *State) {
		if s.Mappings["m"] == nil {
			t.Fatal("the resend deleted the mapping created after the first refusal")
		}
	})
	// An iceberg-go twin survives the window too.
	ns := proposal(t, "ns-1", CreateNamespace{Parts: []string{"db"}})
	_ = applyData(f, 4, proposal(t, "ns-0", CreateNamespace{Parts: []string{"db"}}))
	a, b := applyData(f, 5, ns), applyData(f, 6, ns)
	if !errors.Is(a, catalog.ErrNamespaceAlreadyExists) || !errors.Is(b, catalog.ErrNamespaceAlreadyExists) || !sameAnswer(a, b) {
		t.Fatalf("create existing namespace: %v, resent: %v", a, b)
	}
}

// TestProposalsWithoutIDApplyAsBefore: an entry without a proposal id (an
// older proposer) applies every time and leaves no window.
func TestProposalsWithoutIDApplyAsBefore(t *testing.T) {
	f := NewFSM(nil)
	if err := apply(t, f, 1, CreateNamespace{Parts: []string{"db"}}); err != nil {
		t.Fatal(err)
	}
	if err := apply(t, f, 2, CreateNamespace{Parts: []string{"db"}}); !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		t.Fatalf("second create without id = %v", err)
	}
	f.Read(func(s *State) {
		if s.Proposals != nil {
			t.Fatalf("window made without ids: %d", s.Proposals.Len())
		}
	})
}

// TestProposalEnvelopeIsBackwardCompatible: a node older than the proposal
// id decodes the payload into the command as before (it ignores the
// field); the id is read back; an empty command stays valid JSON.
func TestProposalEnvelopeIsBackwardCompatible(t *testing.T) {
	cmd := CommitTables{Swaps: []TableSwap{{Table: "t", Expected: "a", New: "b"}}, Table: "t", Entries: []string{"e"}, At: 7}
	data := proposal(t, "ID-1.x_y", cmd)
	if data[0] != byte(CmdCommitTables) || ProposalID(data) != "ID-1.x_y" {
		t.Fatalf("envelope %q: id %q", data, ProposalID(data))
	}
	var old CommitTables
	if err := json.Unmarshal(data[1:], &old); err != nil || !reflect.DeepEqual(old, cmd) {
		t.Fatalf("an older node decodes %+v (%v), want %+v", old, err, cmd)
	}
	empty := proposal(t, "e1", Assign{})
	if !json.Valid(empty[1:]) || ProposalID(empty) != "e1" {
		t.Fatalf("empty command envelope %q", empty)
	}
	plain, _ := Encode(cmd)
	if ProposalID(plain) != "" {
		t.Fatal("an entry without an id has one")
	}
	for _, bad := range []string{"", "has space", `quo"te`, string(make([]byte, 65))} {
		if _, err := EncodeProposal(bad, cmd); err == nil {
			t.Errorf("id %q accepted", bad)
		}
	}
}

// TestProposalWindowEvictsTheOldest: the window holds the last
// ProposalWindowSize proposals; an older one is applied again if resent.
func TestProposalWindowEvictsTheOldest(t *testing.T) {
	f := NewFSM(nil)
	for i := range ProposalWindowSize + 1 {
		if err := f.Apply(uint64(i+1), proposal(t, fmt.Sprintf("p%d", i), RemoveNode{ID: "x"})); err != nil {
			t.Fatal(err)
		}
	}
	f.Read(func(s *State) {
		if s.Proposals.Len() != ProposalWindowSize {
			t.Fatalf("window holds %d", s.Proposals.Len())
		}
		if _, ok := s.Proposals.Lookup("p0"); ok {
			t.Fatal("the oldest proposal was not evicted")
		}
		if r, ok := s.Proposals.Lookup("p1"); !ok || r.Index != 2 {
			t.Fatalf("p1 = %+v, %v", r, ok)
		}
	})
	// p0 is out of the window: resent, it applies again (and is recorded).
	if err := f.Apply(ProposalWindowSize+2, proposal(t, "p0", DeleteMapping{Name: "m"})); !errors.Is(err, ErrNoSuchMapping) {
		t.Fatalf("evicted proposal resent = %v, want it applied", err)
	}
}

// TestSnapshotRoundTripWithProposals: the window (full and wrapped, with
// successes and refusals) survives a snapshot, and the restored FSM dedupes
// and evicts exactly as the original: both answer a resend the same and
// reach the same state after the same entries.
func TestSnapshotRoundTripWithProposals(t *testing.T) {
	f := seeded(t)
	refused := proposal(t, "refused", DeleteMapping{Name: "nope"})
	wantErr := applyData(f, 10, refused)
	for i := range ProposalWindowSize + 3 { // fills the window and wraps it
		if err := f.Apply(uint64(11+i), proposal(t, fmt.Sprintf("p%d", i), RemoveNode{ID: "x"})); err != nil {
			t.Fatal(err)
		}
	}
	refusedLate := proposal(t, "refused-late", CreateNamespace{Parts: []string{"db"}})
	lateErr := applyData(f, 20000, refusedLate)
	data := snapshotBytes(t, f)
	if !bytes.Contains(data, []byte(`"proposals":{"version":1,`)) {
		t.Fatalf("snapshot carries no versioned window: %.200s", data)
	}
	g := NewFSM(nil)
	if err := g.Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
		t.Fatal(err)
	}
	if again := snapshotBytes(t, g); !bytes.Equal(data, again) {
		t.Fatal("snapshot changed across restore")
	}
	for _, fsm := range []*FSM{f, g} {
		if err := applyData(fsm, 20001, refusedLate); !sameAnswer(err, lateErr) || !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			t.Fatalf("resend after restore = %v, want %v", err, lateErr)
		}
		if err := applyData(fsm, 20002, proposal(t, "p5", RemoveNode{ID: "x"})); err != nil {
			t.Fatal(err)
		}
		if err := applyData(fsm, 20003, proposal(t, "next", RemoveNode{ID: "y"})); err != nil {
			t.Fatal(err)
		}
	}
	// "refused" was evicted by the wrap, on both: resent, it applies again.
	if a, b := applyData(f, 20004, refused), applyData(g, 20004, refused); !sameAnswer(a, wantErr) || !sameAnswer(b, wantErr) {
		t.Fatalf("evicted refusal: %v / %v", a, b)
	}
	if a, b := snapshotBytes(t, f), snapshotBytes(t, g); !bytes.Equal(a, b) {
		t.Fatal("original and restored FSM diverged after the same entries")
	}
}

func TestProposalWindowVersionRefused(t *testing.T) {
	_, err := DecodeSnapshot(bytes.NewReader([]byte(`{"version": 1, "state": {"proposals": {"version": 2, "applied": []}}}`)))
	if !errors.Is(err, ErrSnapshotVersion) {
		t.Fatalf("future window = %v", err)
	}
	st, err := DecodeSnapshot(bytes.NewReader([]byte(`{"version": 1, "state": {}}`)))
	if err != nil || st.Proposals.Len() != 0 {
		t.Fatalf("snapshot without a window: %v, %d", err, st.Proposals.Len())
	}
	_, err = DecodeSnapshot(bytes.NewReader([]byte(`{"version": 1, "state": {"proposals": {"version": 1, "applied": [{"id":"a","index":1},{"id":"a","index":2}]}}}`)))
	if err == nil {
		t.Fatal("a window with a repeated id accepted")
	}
}
