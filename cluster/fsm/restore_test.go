package fsm_test

import (
	"errors"
	"strings"
	"testing"

	. "github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// restoredState is what Recover produces for the seeded FSM's table after
// its pending entry was committed elsewhere: offsets only, holderless epochs.
func restoredState() *State {
	st := NewState()
	key := ledger.TableKey([]string{"db", "orders"})
	st.Namespaces[ledger.TableKey([]string{"db"})] = &Namespace{Parts: []string{"db"}}
	st.Tables[key] = &Table{Ident: []string{"db", "orders"}, MetadataLocation: "file:///w/db/orders/metadata/00003-c.metadata.json", Rows: 10}
	st.Sources["orders"] = &TopicSource{Topic: "orders", Table: key, Partitions: 1}
	st.Ledger.Offsets[key] = map[string]*ledger.Offsets{"orders/0": {Start: 0, Committed: 10, End: 10}}
	st.Ledger.Assignments["orders/0"] = ledger.Assignment{Epoch: 3}
	return st
}

func TestRestoreStateCommand(t *testing.T) {
	key := ledger.TableKey([]string{"db", "orders"})
	tp := ledger.TopicPartition{Topic: "orders", Partition: 0}
	f := NewFSM(nil)
	steps := []struct {
		c    Command
		want error
	}{
		{RegisterNode{Node: Member{ID: "n1", Addr: "127.0.0.1:1"}}, nil},
		{RestoreState{State: restoredState()}, nil},
		// Epochs keep growing across the recovery.
		{Assign{Partitions: []PartitionAssignment{{TopicPartition: tp, Assignment: ledger.Assignment{Node: "n1", Epoch: 3}}}}, ledger.ErrStaleEpoch},
		{Assign{Partitions: []PartitionAssignment{{TopicPartition: tp, Assignment: ledger.Assignment{Node: "n1", Epoch: 4}}},
			Committers: []CommitterAssignment{{Table: key, Assignment: ledger.Assignment{Node: "n1", Epoch: 1}}}}, nil},
		// Resume exactly at the committed offset.
		{RecordFiles{Table: key, Entry: ledger.Entry{ID: "e1", Node: "n1", Ranges: []ledger.Range{{TopicPartition: tp, From: 0, To: 10, Epoch: 4}}}}, ledger.ErrOverlap},
		{RecordFiles{Table: key, Entry: ledger.Entry{ID: "e2", Node: "n1", Records: 5, Ranges: []ledger.Range{{TopicPartition: tp, From: 10, To: 15, Epoch: 4}}}}, nil},
		{CommitTables{Swaps: []TableSwap{{Table: key, Expected: "file:///w/db/orders/metadata/00003-c.metadata.json", New: "file:///w/db/orders/metadata/00004-d.metadata.json"}},
			Table: key, Entries: []string{"e2"}, Committer: &ledger.Assignment{Node: "n1", Epoch: 1}}, nil},
		// Never twice: a replayed restore cannot roll the cluster back.
		{RestoreState{State: restoredState()}, ErrNotEmpty},
	}
	for i, s := range steps {
		if err := apply(t, f, uint64(i+1), s.c); !errors.Is(err, s.want) || (s.want == nil && err != nil) {
			t.Fatalf("step %d %s = %v, want %v", i, s.c.Type(), err, s.want)
		}
	}
	f.Read(func(s *State) {
		o, _ := s.Ledger.Position(key, tp)
		if o != (ledger.Offsets{Start: 0, Committed: 15, End: 15}) || s.Tables[key].Rows != 15 || s.Nodes["n1"] == nil {
			t.Fatalf("after restore, record, commit: offsets %+v table %+v nodes %v", o, s.Tables[key], s.Nodes)
		}
		if err := s.Ledger.Validate(); err != nil {
			t.Fatal(err)
		}
	})

	// A cluster that already has a table refuses, and a restored ledger
	// must not carry pending entries.
	if err := apply(t, seeded(t), 100, RestoreState{State: restoredState()}); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("restore into a live cluster = %v", err)
	}
	withPending := restoredState()
	withPending.Ledger.Pending[key] = []ledger.Entry{{ID: "x", Ranges: []ledger.Range{{TopicPartition: tp, From: 10, To: 11}}}}
	withPending.Ledger.Offsets[key]["orders/0"].End = 11
	g := NewFSM(nil)
	if err := apply(t, g, 1, RestoreState{State: withPending}); err == nil || !strings.Contains(err.Error(), "pending entries") {
		t.Fatalf("restore with pending entries = %v", err)
	}
	if err := apply(t, g, 2, RestoreState{}); err == nil {
		t.Fatal("restore without a state accepted")
	}
	g.Read(func(s *State) {
		if len(s.Tables) != 0 || len(s.Ledger.Offsets) != 0 {
			t.Fatalf("refused restores changed the state: %+v", s)
		}
	})
}
