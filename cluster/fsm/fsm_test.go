package fsm_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/hashicorp/raft"

	. "github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/ledger"
)

func TestSnapshotRoundTrip(t *testing.T) {
	f := seeded(t)
	data := snapshotBytes(t, f)
	g := NewFSM(nil)
	if err := g.Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
		t.Fatal(err)
	}
	if again := snapshotBytes(t, g); !bytes.Equal(data, again) {
		t.Fatalf("snapshot changed across restore:\n%s\n%s", data, again)
	}
	// The restored FSM keeps applying: committing the pending entry works.
	key := ledger.TableKey([]string{"db", "orders"})
	err := apply(t, g, 10, CommitTables{Swaps: []TableSwap{{Table: key, Expected: "file:///w/db/orders/metadata/00000-a.metadata.json", New: "file:///w/db/orders/metadata/00001-b.metadata.json"}},
		Table: key, Entries: []string{"e1"}, Committer: &ledger.Assignment{Node: "n1", Epoch: 1}, At: 5})
	if err != nil {
		t.Fatal(err)
	}
	g.Read(func(s *State) {
		o, _ := s.Ledger.Position(key, ledger.TopicPartition{Topic: "orders", Partition: 0})
		if o.Committed != 10 || s.Tables[key].Rows != 10 || len(s.Ledger.Pending[key]) != 0 {
			t.Fatalf("after commit: offsets %+v table %+v", o, s.Tables[key])
		}
	})
}

func TestSnapshotVersionRefused(t *testing.T) {
	_, err := DecodeSnapshot(bytes.NewReader([]byte(`{"version": 99, "state": {}}`)))
	if !errors.Is(err, ErrSnapshotVersion) {
		t.Fatalf("future snapshot = %v", err)
	}
	if ve, ok := errors.AsType[*VersionError](err); !ok || ve.Version != 99 || ve.Supported != SnapshotVersion ||
		!strings.Contains(err.Error(), "snapshot format version 99 is newer than this node reads (up to version 1)") {
		t.Fatalf("future snapshot error does not name both versions: %v", err)
	}
	_, err = DecodeSnapshot(bytes.NewReader([]byte(`{"version": 1, "state": {"ledger": {"offsets": {"t": {"a/0": {"start": 5, "committed": 2, "end": 9}}}}}}`)))
	if err == nil {
		t.Fatal("inconsistent ledger accepted")
	}
}

func TestCommitCompareAndSwap(t *testing.T) {
	key := ledger.TableKey([]string{"db", "orders"})
	cur := "file:///w/db/orders/metadata/00000-a.metadata.json"
	good := func() CommitTables {
		return CommitTables{Swaps: []TableSwap{{Table: key, Expected: cur, New: "file:///new.json"}},
			Table: key, Entries: []string{"e1"}, Committer: &ledger.Assignment{Node: "n1", Epoch: 1}}
	}
	cases := []struct {
		name string
		mut  func(*CommitTables)
		want error
	}{
		{"ok", func(*CommitTables) {}, nil},
		{"stale pointer", func(c *CommitTables) { c.Swaps[0].Expected = "file:///old.json" }, table.ErrCommitFailed},
		{"stale committer", func(c *CommitTables) { c.Committer = &ledger.Assignment{Node: "n1", Epoch: 0} }, ErrStaleCommitter},
		{"unknown entry", func(c *CommitTables) { c.Entries = []string{"nope"} }, ledger.ErrUnknownEntry},
		{"unknown table", func(c *CommitTables) { c.Swaps[0].Table = "x" }, catalog.ErrNoSuchTable},
		{"second swap stale", func(c *CommitTables) {
			c.Swaps = append([]TableSwap{{Table: key, Expected: "file:///zzz", New: "file:///q"}}, c.Swaps...)
		}, table.ErrCommitFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := seeded(t)
			before := snapshotBytes(t, f)
			cmd := good()
			c.mut(&cmd)
			err := apply(t, f, 100, cmd)
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			// A refused commit changes nothing but the applied index.
			after := snapshotBytes(t, f)
			if !bytes.Equal(bytes.Replace(before, []byte(`"applied":6`), []byte(`"applied":100`), 1), after) {
				t.Fatalf("refused commit changed the state:\n%s\n%s", before, after)
			}
		})
	}
}

func TestUnknownCommandSkipped(t *testing.T) {
	f := seeded(t)
	res := raftnode.NewRaftFSM(f, nil).Apply(&raft.Log{Index: 50, Type: raft.LogCommand, Data: append([]byte{200}, `{"future": true}`...)}).(ApplyResult)
	if res.Err != nil {
		t.Fatalf("unknown command = %v", res.Err)
	}
	f.Read(func(s *State) {
		if s.Skipped != 1 || s.Applied != 50 {
			t.Fatalf("skipped %d applied %d", s.Skipped, s.Applied)
		}
	})
}

func TestRecordFilesFenced(t *testing.T) {
	f := seeded(t)
	key := ledger.TableKey([]string{"db", "orders"})
	tp := ledger.TopicPartition{Topic: "orders", Partition: 0}
	// The partition moves to n2: n1's next flush is refused.
	if err := apply(t, f, 20, Assign{Partitions: []PartitionAssignment{{TopicPartition: tp, Assignment: ledger.Assignment{Node: "n2", Epoch: 2}}}}); err != nil {
		t.Fatal(err)
	}
	err := apply(t, f, 21, RecordFiles{Table: key, Entry: ledger.Entry{ID: "e2", Node: "n1", Ranges: []ledger.Range{{TopicPartition: tp, From: 10, To: 20, Epoch: 1}}}})
	if !errors.Is(err, ledger.ErrStaleEpoch) || IsRetryable(err) {
		t.Fatalf("stale writer = %v (retryable %v)", err, IsRetryable(err))
	}
	// An assignment back to an older epoch is refused too.
	if err := apply(t, f, 22, Assign{Partitions: []PartitionAssignment{{TopicPartition: tp, Assignment: ledger.Assignment{Node: "n1", Epoch: 1}}}}); !errors.Is(err, ledger.ErrStaleEpoch) {
		t.Fatalf("epoch regression = %v", err)
	}
}

func TestCatalogSyncedFencedByCommitter(t *testing.T) {
	s := NewState()
	s.Namespaces["ns"] = &Namespace{Parts: []string{"ns"}}
	s.Tables["ns\x1ft"] = &Table{Ident: []string{"ns", "t"}, MetadataLocation: "m1"}
	s.Tables["ns\x1ft_dlq"] = &Table{Ident: []string{"ns", "t_dlq"}, MetadataLocation: "d1"}
	s.Committers["ns\x1ft"] = ledger.Assignment{Node: "a", Epoch: 2}
	cur, stale := ledger.Assignment{Node: "a", Epoch: 2}, ledger.Assignment{Node: "b", Epoch: 1}
	for _, tc := range []struct {
		name string
		cmd  CatalogSynced
		ok   bool
	}{
		{"current committer", CatalogSynced{Table: "ns\x1ft", Catalog: "glue", MetadataLocation: "m1", Committer: &cur}, true},
		{"dead-letter table by its table's committer", CatalogSynced{Table: "ns\x1ft_dlq", Catalog: "glue", MetadataLocation: "d1", Committer: &cur}, true},
		{"stale committer", CatalogSynced{Table: "ns\x1ft", Catalog: "glue", MetadataLocation: "m0", Committer: &stale}, false},
		{"unknown table", CatalogSynced{Table: "ns\x1fx", Catalog: "glue", MetadataLocation: "m1"}, false},
		{"no catalog", CatalogSynced{Table: "ns\x1ft", MetadataLocation: "m1"}, false},
	} {
		err := applyCatalogSynced(s, &tc.cmd)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	if got := s.Tables["ns\x1ft"].Synced["glue"].MetadataLocation; got != "m1" {
		t.Fatalf("synced location %q, want m1 (the stale committer must not move it)", got)
	}
}
