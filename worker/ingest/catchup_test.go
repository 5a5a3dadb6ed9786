package ingest

import (
	"context"
	"testing"

	"github.com/floe-io/floe/internal/ledger"
)

// TestBacklogNoted: a flush for space marks a backlog only when the
// partitions are still more than half that flush's records behind their
// ends; a mark stays until the pipeline catches up.
func TestBacklogNoted(t *testing.T) {
	for _, c := range []struct {
		name     string
		parts    [][2]int64 // next, hw per partition
		stopped  int        // index of a stopped partition, -1 for none
		flushing int
		before   bool
		want     bool
	}{
		{"a drain, far behind", [][2]int64{{1000, 500_000}, {2000, 400_000}}, -1, 100_000, false, true},
		{"steady flow at a high rate: within a fetch of the ends", [][2]int64{{1000, 1500}, {2000, 2400}}, -1, 100_000, false, false},
		{"exactly half behind is not a backlog", [][2]int64{{0, 30}, {0, 20}}, -1, 100, false, false},
		{"just over half", [][2]int64{{0, 30}, {0, 21}}, -1, 100, false, true},
		{"a stopped partition's lag does not count", [][2]int64{{0, 1_000_000}, {10, 10}}, 0, 100, false, false},
		{"nothing flushed", [][2]int64{{0, 1_000_000}}, -1, 0, false, false},
		{"a mark stays", [][2]int64{{10, 10}}, -1, 100, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &Pipeline{backlog: c.before, parts: map[ledger.TopicPartition]*partState{}}
			for i, nh := range c.parts {
				tp := ledger.TopicPartition{Topic: "t", Partition: int32(i)}
				p.parts[tp] = &partState{tp: tp, next: nh[0], hw: nh[1], stopped: i == c.stopped}
			}
			p.noteFlushForSpace(c.flushing)
			if p.backlog != c.want {
				t.Fatalf("backlog = %v, want %v (lag %d)", p.backlog, c.want, p.lag())
			}
		})
	}
}

// TestAtEnds: caught up means every fetched partition at the end its
// reader last saw; a stopped partition (draining) does not hold it back.
func TestAtEnds(t *testing.T) {
	a := ledger.TopicPartition{Topic: "t", Partition: 0}
	b := ledger.TopicPartition{Topic: "t", Partition: 1}
	for _, c := range []struct {
		name   string
		pa, pb partState
		wantA  bool // asked after a record of a
	}{
		{"both at their ends", partState{next: 5, hw: 5}, partState{next: 7, hw: 7}, true},
		{"b behind", partState{next: 5, hw: 5}, partState{next: 6, hw: 7}, false},
		{"a behind", partState{next: 4, hw: 5}, partState{next: 7, hw: 7}, false},
		{"b stopped behind", partState{next: 5, hw: 5}, partState{next: 1, hw: 7, stopped: true}, true},
		{"b never read (no end seen)", partState{next: 5, hw: 5}, partState{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			pa, pb := c.pa, c.pb
			pa.tp, pb.tp = a, b
			p := &Pipeline{parts: map[ledger.TopicPartition]*partState{a: &pa, b: &pb}}
			if got := p.atEnds(&pa); got != c.wantA {
				t.Fatalf("atEnds = %v, want %v", got, c.wantA)
			}
		})
	}
}

// TestCaughtUpOnce: catching up ends the backlog, so later records wait
// for the tick again; a backlog whose last flush for space took every
// record read needs no flush.
func TestCaughtUpOnce(t *testing.T) {
	tp := ledger.TopicPartition{Topic: "t", Partition: 0}
	ps := &partState{tp: tp, from: 10, next: 10, hw: 10}
	p := &Pipeline{backlog: true, parts: map[ledger.TopicPartition]*partState{tp: ps}}
	p.caughtUp(context.Background(), ps)
	if p.backlog || p.inflight != nil {
		t.Fatalf("backlog %v, flush started %v: want the backlog ended with nothing to flush", p.backlog, p.inflight != nil)
	}
	// No backlog: at the ends with records read, nothing is flushed (a
	// flush here would need a node and a sink, and panic).
	ps.next, ps.hw = 12, 12
	p.caughtUp(context.Background(), ps)
	if p.inflight != nil {
		t.Fatal("flushed at the ends without a backlog")
	}
}
