package ledger

import (
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

func tp(p int32) TopicPartition { return TopicPartition{Topic: "t", Partition: p} }

func TestRecordRules(t *testing.T) {
	base := func() *Ledger {
		l := New()
		if err := l.Assign(tp(0), Assignment{Node: "n1", Epoch: 2}); err != nil {
			t.Fatal(err)
		}
		if err := l.Record("tbl", Entry{ID: "a", Node: "n1", Ranges: []Range{{TopicPartition: tp(0), From: 10, To: 20, Epoch: 2}}}); err != nil {
			t.Fatal(err)
		}
		return l
	}
	cases := []struct {
		name string
		e    Entry
		want error
	}{
		{"contiguous", Entry{ID: "b", Node: "n1", Ranges: []Range{{TopicPartition: tp(0), From: 20, To: 25, Epoch: 2}}}, nil},
		{"gap", Entry{ID: "b", Node: "n1", Ranges: []Range{{TopicPartition: tp(0), From: 21, To: 25, Epoch: 2}}}, ErrGap},
		{"overlap", Entry{ID: "b", Node: "n1", Ranges: []Range{{TopicPartition: tp(0), From: 19, To: 25, Epoch: 2}}}, ErrOverlap},
		{"stale epoch", Entry{ID: "b", Node: "n1", Ranges: []Range{{TopicPartition: tp(0), From: 20, To: 25, Epoch: 1}}}, ErrStaleEpoch},
		{"wrong node", Entry{ID: "b", Node: "n2", Ranges: []Range{{TopicPartition: tp(0), From: 20, To: 25, Epoch: 2}}}, ErrStaleEpoch},
		{"unassigned", Entry{ID: "b", Node: "n1", Ranges: []Range{{TopicPartition: tp(1), From: 0, To: 5, Epoch: 2}}}, ErrNotAssigned},
		{"duplicate id", Entry{ID: "a", Node: "n1", Ranges: []Range{{TopicPartition: tp(0), From: 20, To: 25, Epoch: 2}}}, ErrInvalidEntry},
		{"empty range", Entry{ID: "b", Node: "n1", Ranges: []Range{{TopicPartition: tp(0), From: 20, To: 20, Epoch: 2}}}, ErrInvalidEntry},
		{"no ranges", Entry{ID: "b", Node: "n1"}, ErrInvalidEntry},
		{"no id", Entry{Node: "n1", Ranges: []Range{{TopicPartition: tp(0), From: 20, To: 25, Epoch: 2}}}, ErrInvalidEntry},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := base()
			err := l.Record("tbl", c.e)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("Record = %v, want %v", err, c.want)
			}
			if err := l.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCommitOrder(t *testing.T) {
	l := New()
	_ = l.Assign(tp(0), Assignment{Node: "n", Epoch: 1})
	for i, id := range []string{"a", "b", "c"} {
		// Record times are not in offset order: the newest committed is
		// the maximum, not the last.
		r := Range{TopicPartition: tp(0), From: int64(i * 10), To: int64(i*10 + 10), Epoch: 1, MaxTS: []int64{500, 300, 900}[i]}
		if err := l.Record("x", Entry{ID: id, Node: "n", Ranges: []Range{r}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Commit("x", []string{"b"}); !errors.Is(err, ErrNotOldest) {
		t.Fatalf("out of order commit = %v", err)
	}
	if _, err := l.Commit("x", []string{"zz"}); !errors.Is(err, ErrUnknownEntry) {
		t.Fatalf("unknown commit = %v", err)
	}
	done, err := l.Commit("x", []string{"a", "b"})
	if err != nil || len(done) != 2 {
		t.Fatalf("commit = %v %v", done, err)
	}
	o, _ := l.Position("x", tp(0))
	if o != (Offsets{Start: 0, Committed: 20, End: 30, NewestTS: 500}) {
		t.Fatalf("offsets = %+v", o)
	}
}

func TestAssignEpochsOnlyGrow(t *testing.T) {
	l := New()
	if err := l.Assign(tp(0), Assignment{Node: "a", Epoch: 3}); err != nil {
		t.Fatal(err)
	}
	if err := l.Assign(tp(0), Assignment{Node: "b", Epoch: 3}); !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("same epoch other node = %v", err)
	}
	if err := l.Assign(tp(0), Assignment{Node: "a", Epoch: 2}); !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("older epoch = %v", err)
	}
	if err := l.Assign(tp(0), Assignment{Node: "b", Epoch: 4}); err != nil {
		t.Fatal(err)
	}
}

// TestLedgerProperties drives the ledger with random records, reassignments
// and commits from several would-be writers, some of them stale, and checks
// after every step that the invariants hold and that committed offsets never
// move backwards. At the end the committed ranges of each partition tile
// [start, committed) exactly: no gap, no overlap.
func TestLedgerProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := New()
		nodes := []string{"n1", "n2", "n3"}
		parts := rapid.IntRange(1, 4).Draw(t, "parts")
		epochs := map[int32]uint64{}
		for p := range int32(parts) {
			epochs[p] = 1
			if err := l.Assign(tp(p), Assignment{Node: "n1", Epoch: 1}); err != nil {
				t.Fatal(err)
			}
		}
		committed := map[int32][]Range{}
		lastCommitted := map[int32]int64{}
		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for i := range steps {
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0: // some writer records a range it believes is next
				p := int32(rapid.IntRange(0, parts-1).Draw(t, "p"))
				node := rapid.SampledFrom(nodes).Draw(t, "node")
				epoch := uint64(rapid.IntRange(0, int(epochs[p])+1).Draw(t, "epoch"))
				o, known := l.Position("tbl", tp(p))
				from := o.End + int64(rapid.IntRange(-2, 2).Draw(t, "skew"))
				if !known {
					from = int64(rapid.IntRange(0, 5).Draw(t, "start"))
				}
				to := from + int64(rapid.IntRange(0, 5).Draw(t, "len"))
				e := Entry{ID: fmt.Sprint("e", i), Node: node, Ranges: []Range{{TopicPartition: tp(p), From: from, To: to, Epoch: epoch}}}
				err := l.Record("tbl", e)
				a := l.Assignments[tp(p).String()]
				valid := from >= 0 && to > from && epoch == a.Epoch && node == a.Node && (!known || from == o.End)
				if valid != (err == nil) {
					t.Fatalf("Record(%+v) = %v, valid=%v (offsets %+v known=%v, assignment %+v)", e, err, valid, o, known, a)
				}
			case 1: // the controller moves a partition
				p := int32(rapid.IntRange(0, parts-1).Draw(t, "p"))
				epochs[p]++
				if err := l.Assign(tp(p), Assignment{Node: rapid.SampledFrom(nodes).Draw(t, "to"), Epoch: epochs[p]}); err != nil {
					t.Fatal(err)
				}
			case 2: // the committer commits the oldest k entries
				n := len(l.Pending["tbl"])
				if n == 0 {
					continue
				}
				k := rapid.IntRange(1, n).Draw(t, "k")
				var ids []string
				for _, e := range l.Pending["tbl"][:k] {
					ids = append(ids, e.ID)
				}
				done, err := l.Commit("tbl", ids)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range done {
					for _, r := range e.Ranges {
						committed[r.Partition] = append(committed[r.Partition], r)
					}
				}
			}
			if err := l.Validate(); err != nil {
				t.Fatal(err)
			}
			for p := range int32(parts) {
				o, _ := l.Position("tbl", tp(p))
				if o.Committed < lastCommitted[p] {
					t.Fatalf("partition %d committed offset moved back from %d to %d", p, lastCommitted[p], o.Committed)
				}
				lastCommitted[p] = o.Committed
			}
		}
		for p, rs := range committed {
			o, _ := l.Position("tbl", tp(p))
			next := o.Start
			for _, r := range rs {
				if r.From != next {
					t.Fatalf("partition %d: committed range starts at %d, expected %d", p, r.From, next)
				}
				next = r.To
			}
			if next != o.Committed {
				t.Fatalf("partition %d: committed ranges end at %d, committed offset %d", p, next, o.Committed)
			}
		}
	})
}
