package iceberg

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/testing/deltaview"
)

// recordWithDead writes rows offsets [next, next+rows) of partition 0 as
// one entry whose last dead records are dead letters (written to the
// dead-letter table), and returns the dead letters' offsets.
func (c *deltaCase) recordWithDead(rows, dead int) []int64 {
	c.t.Helper()
	tp := ledger.TopicPartition{Topic: "t"}
	var good, bad []*records.Record
	var offsets []int64
	for i := range int64(rows) {
		r := &records.Record{Topic: "t", Offset: c.next + i, Raw: []byte("v")}
		if i >= int64(rows-dead) {
			r.Err = "injected poison"
			bad = append(bad, r)
			offsets = append(offsets, r.Offset)
			continue
		}
		good = append(good, r)
	}
	e := ledger.Entry{ID: fmt.Sprintf("e%d", c.n+1), Node: "n1", Records: int64(len(good)), DLQ: int64(len(bad)),
		WrittenAt: time.Now().UnixMilli(), Ranges: []ledger.Range{{TopicPartition: tp, From: c.next, To: c.next + int64(rows), Epoch: 1}}}
	var err error
	if len(good) > 0 {
		if e.Files, err = c.s.Write(c.ctx, c.spec, uuid.NewString(), good); err != nil {
			c.t.Fatal(err)
		}
	}
	if len(bad) > 0 {
		if e.DLQFiles, err = c.s.WriteDLQ(c.ctx, c.spec, uuid.NewString(), bad); err != nil {
			c.t.Fatal(err)
		}
	}
	c.n++
	if _, err := c.rn.Apply(c.ctx, fsm.RecordFiles{Table: c.spec.Key, Entry: e}); err != nil {
		c.t.Fatal(err)
	}
	c.next += int64(rows)
	return offsets
}

// dlqRoot is the dead-letter table's location on disk.
func (c *deltaCase) dlqRoot() string {
	c.t.Helper()
	tbl, err := c.cat.LoadTable(c.ctx, DLQIdent(c.spec.Ident))
	if err != nil {
		c.t.Fatal(err)
	}
	return strings.TrimPrefix(tbl.Location(), "file://")
}

// dlqView reads the dead-letter table's Delta log with the independent
// replay and fails unless its versions are contiguous, it carries no txn
// (it moves no offsets a reader resumes from) and, when level, its
// commitInfo's offsets are the dead-letter table's; it returns the rows
// by "partition/offset".
func (c *deltaCase) dlqView(level bool) map[string]int {
	c.t.Helper()
	root := c.dlqRoot()
	v := deltaview.Read(c.t, root)
	v.CheckContiguous(c.t)
	if len(v.Txns) != 0 {
		c.t.Fatalf("dead-letter delta log carries txn versions %v", v.Txns)
	}
	tbl, err := c.cat.LoadTable(c.ctx, DLQIdent(c.spec.Ident))
	if err != nil {
		c.t.Fatal(err)
	}
	if offs, err := Offsets(tbl.CurrentSnapshot()); level && (err != nil || fmt.Sprint(offs) != fmt.Sprint(v.Offsets)) {
		c.t.Fatalf("dead-letter table offsets %v (%v), its delta log's %v", offs, err, v.Offsets)
	}
	return v.Rows(c.t, root)
}

// sameOffsets fails unless rows holds exactly the offsets of partition 0 in
// want, each once.
func sameOffsets(t *testing.T, what string, rows map[string]int, want []int64) {
	t.Helper()
	for _, o := range want {
		if n := rows[fmt.Sprintf("0/%d", o)]; n != 1 {
			t.Fatalf("%s: dead letter at offset %d is %d times in the delta view", what, o, n)
		}
	}
	if len(rows) != len(want) {
		t.Fatalf("%s: delta view has %d distinct rows, want the %d dead letters", what, len(rows), len(want))
	}
}

// TestDeadLetterDeltaLog: the dead-letter table of a table in [iceberg,
// delta] has a Delta log of its own, which the independent replay reads
// as exactly the dead letters committed, each once, after commits whose
// mirror "crashed" (after the commit entry, before the sync, the process
// restarting) as well: the next commit catches it up. A table that writes
// no Delta log gives its dead-letter table none, and turning delta on
// starts the dead-letter log from the letters already there.
func TestDeadLetterDeltaLog(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	c := newDeltaCase(t, false)
	var dead []int64
	dead = append(dead, c.recordWithDead(5, 2)...)
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(c.dlqRoot(), "_delta_log")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an [iceberg] table's dead-letter table has a delta log (%v)", err)
	}
	c.writes.Store(true)
	crashed := 0
	for round := range 10 {
		dead = append(dead, c.recordWithDead(2+rng.IntN(4), rng.IntN(3))...)
		crash := rng.IntN(3) == 0
		if crash {
			c.f.mirroring = func(string) error { return errCrash }
		}
		if err := c.commit(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if crash {
			crashed++
			c.restart() // the mirror never ran: a new process
			continue
		}
		sameOffsets(t, fmt.Sprintf("round %d", round), c.dlqView(true), dead)
	}
	dead = append(dead, c.recordWithDead(3, 1)...)
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	sameOffsets(t, "last", c.dlqView(true), dead)
	if n, distinct, _, ok := deltaview.ReadWithDeltaRS(t, c.dlqRoot()); ok && (n != int64(len(dead)) || distinct != n) {
		t.Fatalf("delta-rs read %d dead letters (%d distinct), want %d", n, distinct, len(dead))
	}
	// The table's own log is untouched by its dead-letter table's: every
	// offset but the dead letters', once, and its sequences contiguous.
	v := deltaview.Read(t, c.root())
	v.CheckContiguous(t)
	rows, isDead := v.Rows(t, c.root()), map[int64]bool{}
	for _, o := range dead {
		isDead[o] = true
	}
	for o := range c.next {
		if n := rows[fmt.Sprintf("0/%d", o)]; (n == 1) == isDead[o] {
			t.Fatalf("offset %d (dead letter: %v) is %d times in the table's delta view", o, isDead[o], n)
		}
	}
	t.Logf("%d mirrors crashed; %d dead letters of %d records", crashed, len(dead), c.next)
}

// TestDeadLetterDeltaLogLagsUntilTheNextCommit: a mirror that fails leaves
// the dead-letter log behind (so the injected failure is real) and the
// next commit, with no dead letter of its own, catches it up.
func TestDeadLetterDeltaLogLagsUntilTheNextCommit(t *testing.T) {
	c := newDeltaCase(t, true)
	dead := c.recordWithDead(4, 2)
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	sameOffsets(t, "first", c.dlqView(true), dead)
	more := c.recordWithDead(4, 3)
	c.f.mirroring = func(string) error { return errCrash }
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	sameOffsets(t, "mirror failed", c.dlqView(false), dead)
	c.f.mirroring = nil
	c.record(2)
	if err := c.commit(); err != nil {
		t.Fatal(err)
	}
	sameOffsets(t, "caught up", c.dlqView(true), append(dead, more...))
}

// TestDeadLetterDeltaLogSettles: a dead-letter mirror lost after its
// commit (a failure, or a crash and a new process) is made level by
// Settle, which the commit loop calls every round, without waiting for
// the table's next commit; once level, Settle writes nothing.
func TestDeadLetterDeltaLogSettles(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			c := newDeltaCase(t, true)
			c.spec.Format = "json"
			dead := c.recordWithDead(4, 2)
			if err := c.commit(); err != nil {
				t.Fatal(err)
			}
			more := c.recordWithDead(4, 3)
			c.f.mirroring = func(string) error { return errCrash }
			if err := c.commit(); err != nil {
				t.Fatal(err)
			}
			sameOffsets(t, "mirror failed", c.dlqView(false), dead)
			c.f.mirroring = nil
			if restart {
				c.restart()
			}
			if err := c.s.Settle(c.ctx, c.spec.Key, c.a, time.Now()); err != nil {
				t.Fatal(err)
			}
			all := append(dead, more...)
			sameOffsets(t, "settled", c.dlqView(true), all)
			versions := len(deltaview.Read(t, c.dlqRoot()).Versions)
			c.f.mirroring = func(string) error { return errors.New("a level log was mirrored again") }
			if err := c.s.Settle(c.ctx, c.spec.Key, c.a, time.Now()); err != nil {
				t.Fatal(err)
			}
			if n := len(deltaview.Read(t, c.dlqRoot()).Versions); n != versions {
				t.Fatalf("settling a level log wrote %d versions", n-versions)
			}
		})
	}
}
