package iceberg

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
)

// orphanCase is a table with one committed file and one orphan (a crashed
// writer's file), both past the 10 ms safety age the tests clean with.
type orphanCase struct {
	s         *Sink
	fence     *testFence
	spec      sink.TableSpec
	a         ledger.Assignment
	committed string
	orphan    ledger.FileDescriptor
	commit    func() error // commits the orphan into the table
}

func newOrphanCase(t *testing.T) *orphanCase {
	t.Helper()
	ctx := context.Background()
	s, cat, rn := newSink(t)
	c := &orphanCase{s: s, fence: &testFence{n: rn}, spec: sink.TableSpec{Key: ledger.TableKey([]string{"db", "fo"}), Ident: []string{"db", "fo"}, Format: "raw"}}
	s.SetFence(c.fence)
	c.a = committer(t, rn, c.spec.Key)
	rec := func(off int64) []*records.Record {
		return []*records.Record{{Topic: "t", Partition: 0, Offset: off, Raw: []byte("v")}}
	}
	// The orphan is written and ages past the safety age before the
	// table's last commit, which cleanup counts ages from (orphanclock.go).
	committed, err := s.Write(ctx, c.spec, "44444444-4444-4444-8444-444444444444", rec(0))
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := s.Write(ctx, c.spec, "55555555-5555-4555-8555-555555555555", rec(1))
	if err != nil {
		t.Fatal(err)
	}
	olderThan(t, 10*time.Millisecond, orphan[0].Path)
	if err := commitForTest(ctx, s, cat, c.spec, committed, ledger.TopicPartition{Topic: "t"}); err != nil {
		t.Fatal(err)
	}
	c.committed, c.orphan = committed[0].Path, orphan[0]
	c.commit = func() error {
		return commitForTest(ctx, s, cat, c.spec, orphan, ledger.TopicPartition{Topic: "t"})
	}
	return c
}

func (c *orphanCase) clean() (int, error) {
	n, _, err := c.s.CleanOrphans(context.Background(), c.spec.Key, 10*time.Millisecond, nil, c.a)
	return n, err
}

func (c *orphanCase) exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := osStat(stripScheme(p))
	return err == nil
}

// TestOrphanDeletionIsFenced: between listing the candidates and deleting
// them, the fence (a read barrier, then the role re-checked) stops a
// committer whose role moved or whose state cannot be proved current: it
// deletes nothing. A candidate that the table or the ledger came to name
// meanwhile is spared.
func TestOrphanDeletionIsFenced(t *testing.T) {
	t.Run("role moved", func(t *testing.T) {
		c := newOrphanCase(t)
		c.fence.at, c.fence.onBarrier = 2, func() error {
			_, err := c.fence.n.Apply(context.Background(), fsm.Assign{Committers: []fsm.CommitterAssignment{{Table: c.spec.Key, Assignment: ledger.Assignment{Node: "n2", Epoch: 2}}}})
			return err
		}
		n, err := c.clean()
		if !errors.Is(err, ledger.ErrStaleCommitter) || n != 0 || !c.exists(t, c.orphan.Path) {
			t.Fatalf("cleanup after the role moved: %d deleted, %v; orphan kept: %v", n, err, c.exists(t, c.orphan.Path))
		}
	})
	t.Run("barrier fails", func(t *testing.T) {
		c := newOrphanCase(t)
		c.fence.at, c.fence.onBarrier = 2, func() error { return errors.New("cut off from the majority (test)") }
		n, err := c.clean()
		if !errors.Is(err, ErrUnfenced) || n != 0 || !c.exists(t, c.orphan.Path) {
			t.Fatalf("cleanup whose barrier failed: %d deleted, %v; orphan kept: %v", n, err, c.exists(t, c.orphan.Path))
		}
	})
	t.Run("no fence", func(t *testing.T) {
		c := newOrphanCase(t)
		c.s.SetFence(nil)
		if n, err := c.clean(); !errors.Is(err, ErrUnfenced) || n != 0 || !c.exists(t, c.orphan.Path) {
			t.Fatalf("cleanup without a fence: %d deleted, %v", n, err)
		}
	})
	t.Run("committed after listing", func(t *testing.T) {
		c := newOrphanCase(t)
		c.fence.at, c.fence.onBarrier = 2, c.commit
		if _, err := c.clean(); err != nil || !c.exists(t, c.orphan.Path) {
			t.Fatalf("a file committed between listing and deleting was deleted (%v)", err)
		}
	})
	t.Run("recorded after listing", func(t *testing.T) {
		c := newOrphanCase(t)
		tp := ledger.TopicPartition{Topic: "t"}
		if _, err := c.fence.n.Apply(context.Background(), fsm.Assign{Partitions: []fsm.PartitionAssignment{{TopicPartition: tp, Assignment: ledger.Assignment{Node: "n1", Epoch: 1}}}}); err != nil {
			t.Fatal(err)
		}
		c.fence.at, c.fence.onBarrier = 2, func() error {
			_, err := c.fence.n.Apply(context.Background(), fsm.RecordFiles{Table: c.spec.Key, Entry: ledger.Entry{
				ID: "e1", Node: "n1", Files: []ledger.FileDescriptor{c.orphan},
				Ranges: []ledger.Range{{TopicPartition: tp, From: 0, To: 1, Epoch: 1}},
			}})
			return err
		}
		if _, err := c.clean(); err != nil || !c.exists(t, c.orphan.Path) {
			t.Fatalf("a file recorded between listing and deleting was deleted (%v)", err)
		}
	})
	t.Run("fence passes", func(t *testing.T) {
		c := newOrphanCase(t)
		if n, err := c.clean(); err != nil || n != 1 || c.exists(t, c.orphan.Path) || !c.exists(t, c.committed) {
			t.Fatalf("cleanup as the current committer: %d deleted, %v", n, err)
		}
	})
}

// TestMaintenanceWaitsForTheLog: expiry and compaction planning pass the
// read barrier before they read a table's metadata, so a node catching up
// reads the current pointer, not one whose file later commits deleted;
// when the barrier fails they read nothing and say why.
func TestMaintenanceWaitsForTheLog(t *testing.T) {
	c := newOrphanCase(t)
	behind := errors.New("not caught up (test)")
	c.fence.onBarrier = func() error { return behind }
	c.fence.at = c.fence.calls + 1
	if _, err := c.s.Expire(context.Background(), c.spec.Key, time.Millisecond, 1, time.Now(), c.a); !errors.Is(err, behind) {
		t.Fatalf("expiry without the barrier passed: %v", err)
	}
	c.fence.at = c.fence.calls + 1
	if _, err := c.s.PlanRewrite(context.Background(), c.spec.Key, sink.CompactionPolicy{TargetFileSize: 1 << 20, MaxBytes: 1 << 40}); !errors.Is(err, behind) {
		t.Fatalf("compaction planning without the barrier passed: %v", err)
	}
}
