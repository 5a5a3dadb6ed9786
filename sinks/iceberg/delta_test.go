package iceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/testing/deltaview"
	"github.com/floe-io/floe/sinks/delta"
	"github.com/floe-io/floe/sinks/sink"
)

// deltaCase is a raw table written by a sink that also writes its Delta
// log; restart replaces the sink, as a process restart would (the Raft
// node, the warehouse and the log stay).
type deltaCase struct {
	t      *testing.T
	ctx    context.Context
	s      *Sink
	f      *hookedFollower // c.s's, with its crash points
	cat    *catalog.Catalog
	rn     *raftnode.Node
	spec   sink.TableSpec
	a      ledger.Assignment
	writes *atomic.Bool
	crash  atomic.Bool // the next publish "crashes" before its entry is proposed
	// settings are the table's Delta settings (zero: the defaults); opts
	// the sink's Delta options, both read at restart and on each use.
	settings atomic.Pointer[delta.Settings]
	opts     delta.Options
	next     int64 // the next offset of partition 0
	n        int   // entries recorded
}

var errCrash = errors.New("injected crash between the delta version and its raft entry")

func newDeltaCase(t *testing.T, writes bool) *deltaCase {
	c := &deltaCase{t: t, ctx: context.Background(), writes: &atomic.Bool{}}
	c.writes.Store(writes)
	c.s, c.cat, c.rn = newSink(t) // registered: a Delta commit needs protocol level 4
	c.spec = sink.TableSpec{Key: ledger.TableKey([]string{"db", "dual"}), Ident: []string{"db", "dual"}, Format: "raw"}
	c.a = committer(t, c.rn, c.spec.Key)
	tp := ledger.TopicPartition{Topic: "t"}
	if _, err := c.rn.Apply(c.ctx, fsm.Assign{Partitions: []fsm.PartitionAssignment{{TopicPartition: tp, Assignment: c.a}}}); err != nil {
		t.Fatal(err)
	}
	c.restart()
	return c
}

// restart is a new process: a new sink with nothing in memory.
func (c *deltaCase) restart() {
	c.s = New(c.cat, 64<<20, nil, nil)
	c.s.SetFence(&testFence{n: c.rn})
	if c.settings.Load() == nil {
		c.settings.Store(&delta.Settings{})
	}
	c.f = setFollower(c.s, testDeltaTables{n: c.rn, writes: c.writes, settings: &c.settings}, nil, c.opts)
	c.f.published = func(string, int64) error {
		if c.crash.CompareAndSwap(true, false) {
			return errCrash
		}
		return nil
	}
}

// record writes rows offsets [next, next+rows) of partition 0 as one entry.
func (c *deltaCase) record(rows int) {
	c.t.Helper()
	tp := ledger.TopicPartition{Topic: "t"}
	var recs []*records.Record
	for i := range int64(rows) {
		r := &records.Record{Topic: "t", Offset: c.next + i, Raw: []byte("v")}
		if c.spec.Format == "json" {
			r.Raw, r.Value = nil, map[string]any{"a": c.next + i, "b": fmt.Sprint(c.next + i)}
		}
		recs = append(recs, r)
	}
	files, err := c.s.Write(c.ctx, c.spec, uuid.NewString(), recs)
	if err != nil {
		c.t.Fatal(err)
	}
	c.n++
	e := ledger.Entry{ID: fmt.Sprintf("e%d", c.n), Node: "n1", Files: files, Records: int64(rows), WrittenAt: time.Now().UnixMilli(),
		Ranges: []ledger.Range{{TopicPartition: tp, From: c.next, To: c.next + int64(rows), Epoch: 1}}}
	if _, err := c.rn.Apply(c.ctx, fsm.RecordFiles{Table: c.spec.Key, Entry: e}); err != nil {
		c.t.Fatal(err)
	}
	c.next += int64(rows)
}

// commit commits every pending entry, as the commit loop does: a commit
// that adopted a Delta version published before a crash commits only that
// version's entries, and the loop goes on with the rest.
func (c *deltaCase) commit() error {
	for range 3 {
		var pending []ledger.Entry
		c.rn.FSM().Read(func(s *fsm.State) { pending = append(pending, s.Ledger.Pending[c.spec.Key]...) })
		if len(pending) == 0 {
			return nil
		}
		if err := c.s.Commit(c.ctx, c.spec.Key, pending, c.a, time.Now()); err != nil {
			return err
		}
	}
	return errors.New("entries still pending after three commits")
}

// table loads the table.
func (c *deltaCase) table() *table.Table {
	tbl, err := c.cat.LoadTable(c.ctx, c.spec.Ident)
	if err != nil {
		c.t.Fatal(err)
	}
	return tbl
}

// root is the table's location on disk.
func (c *deltaCase) root() string { return strings.TrimPrefix(c.table().Location(), "file://") }

// check reads the Delta log with the Go replay (and delta-rs when set up):
// versions and sequences contiguous, the recorded Delta commit its last,
// the Iceberg offsets its newest, and every offset below next once.
func (c *deltaCase) check() deltaview.View {
	c.t.Helper()
	root := c.root()
	v := deltaview.Read(c.t, root)
	v.CheckContiguous(c.t)
	rec, ok := testDeltaTables{n: c.rn}.DeltaRecorded(c.spec.Key)
	last := v.Versions[len(v.Versions)-1]
	if !ok || rec.Sequence != int64(len(v.Txns)) || rec.Version > last {
		c.t.Fatalf("recorded %+v (%v), log has %d sequences up to version %d", rec, ok, len(v.Txns), last)
	}
	tbl, err := c.cat.LoadTable(c.ctx, c.spec.Ident)
	if err != nil {
		c.t.Fatal(err)
	}
	offs, err := Offsets(tbl.CurrentSnapshot())
	if err != nil || !maps.Equal(offs, v.Offsets) {
		c.t.Fatalf("iceberg offsets %v (%v), delta offsets %v", offs, err, v.Offsets)
	}
	rows := v.Rows(c.t, root)
	for o := range c.next {
		if n := rows[fmt.Sprintf("0/%d", o)]; n != 1 {
			c.t.Fatalf("offset %d is %d times in the delta view", o, n)
		}
	}
	if int64(len(rows)) != c.next {
		c.t.Fatalf("delta view has %d distinct offsets, want %d", len(rows), c.next)
	}
	if n, distinct, version, ok := deltaview.ReadWithDeltaRS(c.t, root); ok && (n != c.next || distinct != c.next || version != last) {
		c.t.Fatalf("delta-rs read %d rows (%d distinct) at version %d, want %d at %d", n, distinct, version, c.next, last)
	}
	return v
}

// TestDeltaCommitsSurviveCrashes: a table in [iceberg, delta] through
// commits crashed at random points of the commit step (after its Delta
// version is written and before the Raft entry that records it, or after
// that entry, the process restarting each time), with more entries
// recorded between a crash and the retry: both logs end at the same
// offsets, no Delta version or commit sequence is skipped or repeated,
// and every offset is in the Delta view once.
func TestDeltaCommitsSurviveCrashes(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	c := newDeltaCase(t, true)
	crashes := 0
	for round := range 14 {
		c.record(1 + rng.IntN(5))
		switch rng.IntN(3) {
		case 0: // crash after the delta version, before the raft entry
			c.crash.Store(true)
			if err := c.commit(); !errors.Is(err, errCrash) {
				t.Fatalf("round %d: commit through the crash: %v", round, err)
			}
			crashes++
			c.restart()
			if rng.IntN(2) == 0 {
				c.record(1 + rng.IntN(3)) // the retry has more pending
			}
		case 1: // crash after the raft entry
			if err := c.commit(); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			c.restart()
		}
		if err := c.commit(); err != nil {
			t.Fatalf("round %d: retry: %v", round, err)
		}
		if rng.IntN(2) == 0 {
			c.check()
		}
	}
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	v := c.check()
	t.Logf("%d crashes before the raft entry; %d delta versions, %d sequences, %d offsets", crashes, len(v.Versions), len(v.Txns), c.next)
}

// TestDeltaAddedToAnExistingTable: turning delta on for a table with data
// writes version 0 listing its live files (no txn, the data never
// rewritten), then the next commit as sequence 1; turning it off and on
// again syncs the commits the log missed.
func TestDeltaAddedToAnExistingTable(t *testing.T) {
	c := newDeltaCase(t, false)
	for range 2 {
		c.record(3)
		if err := c.commit(); err != nil {
			t.Fatal(err)
		}
	}
	c.writes.Store(true)
	c.record(2)
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	v := c.check()
	if len(v.Versions) != 2 || len(v.Txns) != 1 || len(v.Live) != 3 {
		t.Fatalf("versions %v, txns %v, live %d: want version 0 with the two old files, then sequence 1", v.Versions, v.Txns, len(v.Live))
	}
	c.writes.Store(false)
	c.record(4)
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	c.writes.Store(true)
	c.record(1)
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	if v = c.check(); len(v.Versions) != 4 || len(v.Txns) != 2 || len(v.Live) != 5 {
		t.Fatalf("after off and on: versions %v, txns %v, live %d", v.Versions, v.Txns, len(v.Live))
	}
}
