package iceberg

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ledger"
)

// Table properties Floe sets on the tables it creates so that old metadata
// files do not pile up: iceberg-go deletes metadata files that fall out of
// the metadata log after each commit, keeping the newest 50.
const keptMetadataFiles = "50"

// Expire removes snapshots older than maxAge, and beyond the newest
// maxCount, whichever is stricter. The current snapshot, which carries the
// latest committed offsets, is always kept. It commits through the catalog
// like any other change of the table, fenced by committer, and returns how
// many snapshots went. It first waits until this node has applied the log
// (the fence's barrier), so a node catching up does not read metadata that
// later commits deleted.
//
// It also brings the dead-letter table's floe.offsets up to its table's
// (dlqoffsets.go): commits leave them up to DLQOffsetsMaxAge behind, and a
// table that goes idle would otherwise keep them there.
func (s *Sink) Expire(ctx context.Context, key string, maxAge time.Duration, maxCount int, now time.Time, committer ledger.Assignment) (int, error) {
	if err := s.caughtUp(ctx, key); err != nil {
		return 0, fmt.Errorf("expiring snapshots of %s: %w", ledger.DisplayName(key), err)
	}
	n, err := s.expire(ctx, key, maxAge, maxCount, now, committer)
	if err != nil {
		return n, err
	}
	return n, s.alignDLQ(ctx, key, committer, now)
}

// expire is Expire's expiry, once the node has applied the log.
func (s *Sink) expire(ctx context.Context, key string, maxAge time.Duration, maxCount int, now time.Time, committer ledger.Assignment) (int, error) {
	name := ledger.DisplayName(key)
	tbl, err := s.bindMaintenance(key, committer, now).LoadTable(ctx, ledger.TableIdent(key))
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return 0, nil // created on first data; nothing to expire yet
	}
	if err != nil {
		return 0, fmt.Errorf("expiring snapshots of %s: %w", name, err)
	}
	snaps := tbl.Metadata().Snapshots()
	cur := tbl.CurrentSnapshot()
	if len(snaps) <= 1 || cur == nil {
		return 0, nil
	}
	cutoff := now.Add(-maxAge).UnixMilli()
	if maxCount > 0 && len(snaps) > maxCount {
		ts := make([]int64, len(snaps))
		for i, sn := range snaps {
			ts[i] = sn.TimestampMs
		}
		slices.Sort(ts)
		// Keep the newest maxCount: everything strictly older than the
		// maxCount-th newest goes.
		cutoff = max(cutoff, ts[len(ts)-maxCount])
	}
	cutoff = min(cutoff, cur.TimestampMs) // never the current one
	expired := 0
	for _, sn := range snaps {
		if sn.TimestampMs < cutoff && sn.SnapshotID != cur.SnapshotID {
			expired++
		}
	}
	if expired == 0 {
		return 0, nil
	}
	// ExpireSnapshots measures age from its own clock: express the cutoff
	// as an age, rounded so that it never expires more than planned.
	age := time.Since(time.UnixMilli(cutoff)) + time.Millisecond
	tx := tbl.NewTransaction()
	// Files that only expired snapshots referenced are not deleted here:
	// orphan cleanup removes them, fenced, once they pass its safety age,
	// which also gives readers of an expired snapshot time to finish. (Deleting
	// them in iceberg-go's post-commit step also failed on files a
	// compaction's replaced-file entries had already let it delete.)
	// The age is measured again on iceberg-go's clock, a moment later; on a
	// busy machine that moment can move the boundary past the oldest
	// snapshot meant to stay. Retaining the planned ancestors by count as
	// well keeps the plan exact on the main branch.
	keep := max(1, keptAncestors(tbl.Metadata(), cur, cutoff))
	if err := tx.ExpireSnapshots(table.WithOlderThan(age), table.WithRetainLast(keep), table.WithPostCommit(false)); err != nil {
		return 0, fmt.Errorf("expiring snapshots of %s: %w", name, err)
	}
	after, err := tx.Commit(ctx)
	if err != nil {
		return 0, fmt.Errorf("expiring snapshots of %s: %w", name, err)
	}
	return len(snaps) - len(after.Metadata().Snapshots()), nil
}

// keptAncestors counts the current snapshot and its ancestors that are not
// older than cutoff: the ones the plan keeps.
func keptAncestors(meta table.Metadata, cur *table.Snapshot, cutoff int64) int {
	n := 0
	for sn := cur; sn != nil && (sn.TimestampMs >= cutoff || sn.SnapshotID == cur.SnapshotID); {
		n++
		if sn.ParentSnapshotID == nil {
			break
		}
		sn = meta.SnapshotByID(*sn.ParentSnapshotID)
	}
	return n
}
