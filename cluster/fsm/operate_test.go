package fsm_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	. "github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
)

func TestApplyMappings(t *testing.T) {
	m := func(topic string) Mapping {
		return Mapping{Name: "orders", Table: SpecOf(config.Table{Topic: topic, Namespace: "db"})}
	}
	cases := []struct {
		name    string
		steps   []Command
		wantErr error // of the last step
		want    string
	}{
		{name: "create", steps: []Command{PutMapping{Mapping: m("a"), Create: true}}, want: "a"},
		{name: "create twice with the same content", steps: []Command{PutMapping{Mapping: m("a"), Create: true}, PutMapping{Mapping: m("a"), Create: true}}, want: "a"},
		{name: "create twice with other content", steps: []Command{PutMapping{Mapping: m("a"), Create: true}, PutMapping{Mapping: m("b"), Create: true}}, wantErr: ErrMappingExists, want: "a"},
		{name: "update", steps: []Command{PutMapping{Mapping: m("a"), Create: true}, PutMapping{Mapping: m("b")}}, want: "b"},
		{name: "update missing", steps: []Command{PutMapping{Mapping: m("a")}}, wantErr: ErrNoSuchMapping},
		{name: "delete", steps: []Command{PutMapping{Mapping: m("a"), Create: true}, DeleteMapping{Name: "orders"}}},
		{name: "delete missing", steps: []Command{DeleteMapping{Name: "orders"}}, wantErr: ErrNoSuchMapping},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := NewFSM(nil)
			var err error
			for i, st := range c.steps {
				err = apply(t, f, uint64(i+1), st)
			}
			if !errors.Is(err, c.wantErr) || (err != nil && c.wantErr == nil) {
				t.Fatalf("err %v, want %v", err, c.wantErr)
			}
			f.Read(func(s *State) {
				got := ""
				if mm := s.Mappings["orders"]; mm != nil {
					got = mm.Table.Topic
				}
				if got != c.want {
					t.Fatalf("mapping topic %q, want %q", got, c.want)
				}
			})
		})
	}
}

func TestApplyPauseAndResume(t *testing.T) {
	f := seeded(t)
	key := ledger.TableKey([]string{"db", "orders"})
	if err := apply(t, f, 100, PauseTable{Table: "db\x1fnope"}); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("pausing an unknown table: %v", err)
	}
	if err := apply(t, f, 101, PauseTable{Table: key, At: 7, By: "token:0123abcd"}); err != nil {
		t.Fatal(err)
	}
	// A second pause keeps the first's time and caller.
	if err := apply(t, f, 102, PauseTable{Table: key, At: 8, By: "cert:CN=other"}); err != nil {
		t.Fatal(err)
	}
	f.Read(func(s *State) {
		if s.Paused[key] != 7 || s.PausedBy[key] != "token:0123abcd" {
			t.Fatalf("paused %v by %v", s.Paused, s.PausedBy)
		}
	})
	if err := apply(t, f, 103, ResumeTable{Table: key}); err != nil {
		t.Fatal(err)
	}
	f.Read(func(s *State) {
		if _, ok := s.PausedBy[key]; ok {
			t.Fatalf("a resumed table keeps its pauser: %v", s.PausedBy)
		}
		if _, ok := s.Paused[key]; ok {
			t.Fatalf("still paused after resume")
		}
	})
}

func TestApplyRewind(t *testing.T) {
	key := ledger.TableKey([]string{"db", "orders"})
	tp := ledger.TopicPartition{Topic: "orders", Partition: 0}
	meta := "file:///w/db/orders/metadata/00000-a.metadata.json"
	committer := &ledger.Assignment{Node: "n1", Epoch: 1}
	f := seeded(t) // e1 = [0,10) pending
	if err := apply(t, f, 100, CommitTables{Swaps: []TableSwap{{Table: key, Expected: meta, New: "m2"}}, Table: key, Entries: []string{"e1"}, Committer: committer}); err != nil {
		t.Fatal(err)
	}
	rec := func(idx uint64, id string, from, to int64) error {
		return apply(t, f, idx, RecordFiles{Table: key, Entry: ledger.Entry{ID: id, Node: "n1", Records: to - from, Ranges: []ledger.Range{{TopicPartition: tp, From: from, To: to, Epoch: 1}}}})
	}
	if err := rec(101, "e2", 10, 20); err != nil {
		t.Fatal(err)
	}
	// Rewind to 4 with replace: pending e2 goes, committed and end are 4.
	if err := apply(t, f, 102, RewindTable{Table: key, To: []RewindPosition{{TopicPartition: tp, Offset: 4}}, Replace: true, At: 9, By: "cert:CN=ops"}); err != nil {
		t.Fatal(err)
	}
	f.Read(func(s *State) {
		o, _ := s.Ledger.Position(key, tp)
		if o.Committed != 4 || o.End != 4 || len(s.Ledger.Pending[key]) != 0 {
			t.Fatalf("after rewind: %+v pending %d", o, len(s.Ledger.Pending[key]))
		}
		rw := s.Rewinds[key]
		if rw.Gen != 1 || !rw.ReplacePending() || rw.From[0].Offset != 10 || rw.By != "cert:CN=ops" {
			t.Fatalf("rewind record %+v", rw)
		}
		if err := s.Ledger.Validate(); err != nil {
			t.Fatal(err)
		}
	})
	// Replayed records may be recorded but not committed before the delete.
	if err := rec(103, "e3", 4, 8); err != nil {
		t.Fatal(err)
	}
	err := apply(t, f, 104, CommitTables{Swaps: []TableSwap{{Table: key, Expected: "m2", New: "m3"}}, Table: key, Entries: []string{"e3"}, Committer: committer})
	if !errors.Is(err, table.ErrCommitFailed) {
		t.Fatalf("append before the replace delete: %v", err)
	}
	// A delete naming another generation is refused for good.
	err = apply(t, f, 105, CommitTables{Swaps: []TableSwap{{Table: key, Expected: "m2", New: "m3"}}, Table: key, Committer: committer, RewindGen: 7})
	if !errors.Is(err, ErrStaleRewind) || IsRetryable(err) {
		t.Fatalf("stale rewind gen: %v", err)
	}
	if err := apply(t, f, 106, CommitTables{Swaps: []TableSwap{{Table: key, Expected: "m2", New: "m3"}}, Table: key, Committer: committer, RewindGen: 1, DeletedRows: 6}); err != nil {
		t.Fatal(err)
	}
	if err := apply(t, f, 107, CommitTables{Swaps: []TableSwap{{Table: key, Expected: "m3", New: "m4"}}, Table: key, Entries: []string{"e3"}, Committer: committer}); err != nil {
		t.Fatal(err)
	}
	f.Read(func(s *State) {
		if !s.Rewinds[key].ReplaceDone || s.Tables[key].Rows != 10-6+4 {
			t.Fatalf("rewind %+v rows %d", s.Rewinds[key], s.Tables[key].Rows)
		}
		if o, _ := s.Ledger.Position(key, tp); o.Committed != 8 {
			t.Fatalf("committed %d", o.Committed)
		}
	})
	// The record of a finished rewind survives a snapshot round trip.
	g := NewFSM(nil)
	if err := g.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, f)))); err != nil {
		t.Fatal(err)
	}
	g.Read(func(s *State) {
		if rw := s.Rewinds[key]; rw == nil || !rw.ReplaceDone || rw.Gen != 1 {
			t.Fatalf("restored rewind %+v", rw)
		}
	})
}
