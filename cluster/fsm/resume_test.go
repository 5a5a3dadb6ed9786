package fsm_test

import (
	"bytes"
	"errors"
	"maps"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	. "github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

func TestApplyResumeTable(t *testing.T) {
	key := ledger.TableKey([]string{"db", "orders"})
	tp := ledger.TopicPartition{Topic: "orders", Partition: 0}
	tp1 := ledger.TopicPartition{Topic: "orders", Partition: 1}
	meta := "file:///w/db/orders/metadata/00000-a.metadata.json"
	commit := func(id, expected, next string) Command {
		return CommitTables{Swaps: []TableSwap{{Table: key, Expected: expected, New: next}}, Table: key, Entries: []string{id},
			Committer: &ledger.Assignment{Node: "n1", Epoch: 1}}
	}
	record := func(id string, from, to int64) Command {
		return RecordFiles{Table: key, Entry: ledger.Entry{ID: id, Node: "n1", Ranges: []ledger.Range{{TopicPartition: tp, From: from, To: to, Epoch: 1}}}}
	}
	cases := []struct {
		name      string
		steps     []Command
		wantErr   error // of the last step
		wantGen   uint64
		wantSkips map[string]int64
	}{
		{name: "resume without skip raises the generation",
			steps:   []Command{ResumeTable{Table: key}},
			wantGen: 1},
		{name: "generations grow",
			steps:   []Command{ResumeTable{Table: key}, ResumeTable{Table: key, At: 5}},
			wantGen: 2},
		{name: "skip ahead of the committed offset is kept",
			steps:     []Command{ResumeTable{Table: key, Skips: []ResumeSkip{{TopicPartition: tp, Offset: 10}, {TopicPartition: tp1, Offset: 3}}}},
			wantGen:   1,
			wantSkips: map[string]int64{"orders/0": 10, "orders/1": 3}},
		{name: "a commit that does not pass the skip keeps it",
			steps:     []Command{ResumeTable{Table: key, Skips: []ResumeSkip{{TopicPartition: tp, Offset: 10}}}, commit("e1", meta, "m2")},
			wantGen:   1,
			wantSkips: map[string]int64{"orders/0": 10}},
		{name: "a commit past the skip clears it",
			steps: []Command{ResumeTable{Table: key, Skips: []ResumeSkip{{TopicPartition: tp, Offset: 10}, {TopicPartition: tp1, Offset: 3}}},
				commit("e1", meta, "m2"), record("e2", 10, 20), commit("e2", "m2", "m3")},
			wantGen:   1,
			wantSkips: map[string]int64{"orders/1": 3}},
		{name: "a skip already committed is dropped",
			steps:   []Command{commit("e1", meta, "m2"), ResumeTable{Table: key, Skips: []ResumeSkip{{TopicPartition: tp, Offset: 4}}}},
			wantGen: 1},
		{name: "a later skip of the same partition replaces the earlier",
			steps: []Command{ResumeTable{Table: key, Skips: []ResumeSkip{{TopicPartition: tp, Offset: 10}}},
				ResumeTable{Table: key, Skips: []ResumeSkip{{TopicPartition: tp, Offset: 12}}}},
			wantGen:   2,
			wantSkips: map[string]int64{"orders/0": 12}},
		{name: "a mapped table not created yet",
			steps: []Command{RegisterSources{Sources: []TopicSource{{Topic: "fresh", Table: ledger.TableKey([]string{"db", "fresh"}), Partitions: 1}}},
				ResumeTable{Table: ledger.TableKey([]string{"db", "fresh"}), Skips: []ResumeSkip{{TopicPartition: ledger.TopicPartition{Topic: "fresh"}, Offset: 0}}}},
			wantGen: 0}, // checked on db.orders, untouched
		{name: "unknown table is refused",
			steps:   []Command{ResumeTable{Table: "db\x1fnope"}},
			wantErr: catalog.ErrNoSuchTable},
		{name: "invalid skip is refused",
			steps:   []Command{ResumeTable{Table: key, Skips: []ResumeSkip{{TopicPartition: tp, Offset: -1}}}},
			wantErr: errInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := seeded(t)
			var err error
			for i, st := range c.steps {
				err = apply(t, f, uint64(100+i), st)
				if err != nil && i < len(c.steps)-1 {
					t.Fatalf("step %d %s: %v", i, st.Type(), err)
				}
			}
			switch {
			case c.wantErr == errInvalid && err == nil, c.wantErr != nil && c.wantErr != errInvalid && !errors.Is(err, c.wantErr):
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			case c.wantErr == nil && err != nil:
				t.Fatal(err)
			}
			// The state survives a snapshot round trip.
			st, derr := DecodeSnapshot(bytes.NewReader(snapshotBytes(t, f)))
			if derr != nil {
				t.Fatal(derr)
			}
			var gen uint64
			var skips map[string]int64
			if r := st.Resumes[key]; r != nil {
				gen, skips = r.Gen, r.Skips
			}
			if gen != c.wantGen || !maps.Equal(skips, c.wantSkips) {
				t.Fatalf("gen %d skips %v, want %d %v", gen, skips, c.wantGen, c.wantSkips)
			}
			if c.wantErr != nil && st.Resumes != nil {
				t.Fatalf("a refused resume changed the state: %+v", st.Resumes)
			}
		})
	}
}

var errInvalid = errors.New("any error")
