package fsm_test

import (
	"fmt"
	"testing"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// benchState is a state of tables tables of parts partitions each: every
// partition assigned and positioned, every table committed once and
// holding two pending entries of one file (ten columns of statistics)
// covering all its partitions.
func benchState(tables, parts int) *fsm.State {
	s := fsm.NewState()
	for i := range tables {
		ident := []string{"db", fmt.Sprintf("t%03d", i)}
		key := ledger.TableKey(ident)
		topic := fmt.Sprintf("topic-%03d", i)
		s.Tables[key] = &fsm.Table{Ident: ident, MetadataLocation: "s3://w/db/" + ident[1] + "/metadata/00001.metadata.json", Commits: 1, Rows: 1000, Files: 4}
		s.Sources[topic] = &fsm.TopicSource{Topic: topic, Table: key, Partitions: int32(parts)}
		s.Committers[key] = ledger.Assignment{Node: "n1", Epoch: 3}
		offs := map[string]*ledger.Offsets{}
		var ranges []ledger.Range
		for p := range parts {
			tp := ledger.TopicPartition{Topic: topic, Partition: int32(p)}
			offs[tp.String()] = &ledger.Offsets{Start: 0, Committed: 1000, End: 1200, NewestTS: 1767225600000}
			s.Ledger.Assignments[tp.String()] = ledger.Assignment{Node: fmt.Sprintf("n%d", p%3+1), Epoch: 3}
			ranges = append(ranges, ledger.Range{TopicPartition: tp, From: 1000, To: 1100, Epoch: 3})
		}
		s.Ledger.Offsets[key] = offs
		for e := range 2 {
			f := ledger.FileDescriptor{Path: fmt.Sprintf("s3://w/db/%s/data/%d.parquet", ident[1], e), Format: "PARQUET", RecordCount: 100, SizeBytes: 1 << 20,
				ColumnSizes: map[int]int64{}, ValueCounts: map[int]int64{}, NullCounts: map[int]int64{}, LowerBounds: map[int][]byte{}, UpperBounds: map[int][]byte{}}
			for c := 1; c <= 10; c++ {
				f.ColumnSizes[c], f.ValueCounts[c], f.NullCounts[c] = 1000, 100, 0
				f.LowerBounds[c], f.UpperBounds[c] = []byte("aaaaaaaa"), []byte("zzzzzzzz")
			}
			s.Ledger.Pending[key] = append(s.Ledger.Pending[key], ledger.Entry{ID: fmt.Sprintf("%s-%d", key, e), Node: "n1",
				Files: []ledger.FileDescriptor{f}, Ranges: ranges, Records: 100, Bytes: 1 << 20})
		}
	}
	return s
}

// BenchmarkSnapshotLockHeld measures what FSM.Snapshot holds the FSM's
// lock for, on a state of 5,000 partitions in 500 tables: a deep copy
// (clone, now) against encoding the snapshot (marshal, before). Every Apply
// waits that long.
func BenchmarkSnapshotLockHeld(b *testing.B) {
	s := benchState(500, 10)
	b.Run("clone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.Clone()
		}
	})
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := fsm.EncodeSnapshot(s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
