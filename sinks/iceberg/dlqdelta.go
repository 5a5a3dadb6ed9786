package iceberg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/delta"
)

// The dead-letter table follows its table's formats: when the table writes
// a Delta log, so does <table>_dlq, under the dead-letter table's own root.
//
// Its log mirrors the dead-letter table's committed Iceberg state instead
// of riding in the table's replicated commit entry as the table's own log
// does. The table's log is published before its entry and recorded in it,
// which is what ties each version to one commit sequence and lets a crash
// be recovered from the log's tail; a second log recorded the same way
// would need a second sequence in the entry and a second adoption after a
// crash that must agree with the first (docs/formats.md). The dead-letter
// table needs none of that: nothing reads its Delta versions as offsets to
// resume from. So after each commit that changed the dead-letter table's
// files the committer makes the log's live files that table's current
// snapshot's (delta.Log.Sync: adds and removes by difference, the
// snapshot's floe.offsets in commitInfo, no txn). A sync is idempotent, so
// a crash after the entry and before the sync only delays it: the next
// commit, on this node or the next committer, finds the dead-letter
// table's metadata moved past what it mirrored and syncs again; so does
// the commit loop's next round (Settle, settle.go), without waiting for a
// commit a quiet table may not make. Every dead letter is in the log once.

// dlqKey is the key of key's dead-letter table.
func dlqKey(key string) string { return ledger.TableKey(DLQIdent(ledger.TableIdent(key))) }

// mirrorDLQ brings the Delta log of key's dead-letter table level with
// that table's committed state, when key writes a Delta log and the
// dead-letter table's metadata moved since this process last mirrored it.
// It runs in the table's commit loop after a commit; a failure leaves the
// log to the next commit.
func (s *Sink) mirrorDLQ(ctx context.Context, key string, committer ledger.Assignment, at time.Time) error {
	d := s.delta
	if d == nil {
		return nil
	}
	dk := dlqKey(key)
	if !s.writesDelta(key) {
		d.forget(dk) // delta off: mirror from scratch once it is back
		d.setMirrored(dk, "")
		d.setLevel(key, false)
		return nil
	}
	dlqTbl, err := s.cat.LoadTable(ctx, DLQIdent(ledger.TableIdent(key)))
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil // no dead letter yet
	}
	if err != nil {
		return fmt.Errorf("mirroring the dead-letter table of %s to delta: %w", ledger.DisplayName(key), err)
	}
	if dlqTbl.CurrentSnapshot() == nil || d.mirroredAt(dk) == dlqTbl.MetadataLocation() {
		return nil
	}
	if err := s.syncDLQLog(ctx, key, dlqTbl, committer, at); err != nil {
		d.forget(dk)
		return fmt.Errorf("mirroring the dead-letter table of %s to delta: %w", ledger.DisplayName(key), err)
	}
	d.setMirrored(dk, dlqTbl.MetadataLocation())
	return nil
}

// syncDLQLog syncs the dead-letter table's log (opened once per process,
// with its table's checkpoint interval) to dlqTbl's current snapshot. A
// sync may remove files from the log, so it is fenced like a deletion: a
// committer cut off, whose state lags, cannot undo its successor's
// mirror with its stale view.
func (s *Sink) syncDLQLog(ctx context.Context, key string, dlqTbl *table.Table, committer ledger.Assignment, at time.Time) error {
	d := s.delta
	dk := dlqKey(key)
	interval := d.tables.DeltaSettings(key).CheckpointInterval
	if interval <= 0 {
		interval = d.opts.CheckpointInterval
	}
	d.mu.Lock()
	l, ok := d.logs[dk]
	d.mu.Unlock()
	if !ok {
		st, err := delta.OpenStore(ctx, dlqTbl.Location(), d.props)
		if err != nil {
			return err
		}
		opts := d.opts
		opts.CheckpointInterval = interval
		if l, err = delta.Open(ctx, st, opts); err != nil {
			return err
		}
		d.mu.Lock()
		d.logs[dk] = l
		d.mu.Unlock()
	}
	l.SetCheckpointInterval(interval)
	if d.mirroring != nil {
		if err := d.mirroring(dk); err != nil {
			return err
		}
	}
	if _, err := s.fenceDeletion(ctx, key, committer); err != nil {
		return err
	}
	return syncLog(ctx, l, deltaTable(dlqTbl, dk), dlqTbl, at)
}

// DeadLetterDelta is the version of the Delta log of key's dead-letter
// table that this process last mirrored, false when it mirrored none.
// Call it on key's commit loop, the goroutine that mirrors that log.
func (s *Sink) DeadLetterDelta(key string) (int64, bool) {
	d := s.delta
	if d == nil || !s.writesDelta(key) {
		return 0, false
	}
	d.mu.Lock()
	l, ok := d.logs[dlqKey(key)]
	d.mu.Unlock()
	if !ok || l.Version() < 0 {
		return 0, false
	}
	return l.Version(), true
}

// mirroredAt is the dead-letter table's metadata location this process
// last mirrored to its Delta log ("" for none).
func (d *deltaSide) mirroredAt(dk string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mirrored[dk]
}

func (d *deltaSide) setMirrored(dk, loc string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if loc == "" {
		delete(d.mirrored, dk)
		return
	}
	d.mirrored[dk] = loc
}
