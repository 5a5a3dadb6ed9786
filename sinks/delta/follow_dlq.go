package delta

import (
	"context"
	"fmt"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
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
// snapshot's (Log.Sync: adds and removes by difference, the snapshot's
// floe.offsets in commitInfo, no txn). A sync is idempotent, so a crash
// after the entry and before the sync only delays it: the next commit, on
// this node or the next committer, finds the dead-letter table's metadata
// moved past what it mirrored and syncs again; so does the commit loop's
// next round (Settle), without waiting for a commit a quiet table may not
// make. Every dead letter is in the log once.

// dlqKeyOf is the key of key's dead-letter table.
func dlqKeyOf(key string) string { return ledger.TableKey(sink.DLQIdent(ledger.TableIdent(key))) }

// MirrorDeadLetters brings the Delta log of key's dead-letter table level
// with that table's committed state, when key writes a Delta log and the
// dead-letter table's metadata moved since this process last mirrored it.
// It runs in the table's commit loop after a commit; a failure leaves the
// log to the next commit or round (Settle).
func (f *Follower) MirrorDeadLetters(ctx context.Context, key string, load sink.DeadLetterLoader, at time.Time) error {
	if err := f.mirror(ctx, key, load, at); err != nil {
		f.setLevel(key, false)
		return err
	}
	return nil
}

// Settle mirrors key's dead-letter log once per commit-loop round until
// it is known level: without it a crash, a restart or a failover between
// a commit and its mirror left the mirror one commit behind until the
// table's next commit. Once level it costs a map lookup until a mirror
// fails or the process restarts.
func (f *Follower) Settle(ctx context.Context, key string, load sink.DeadLetterLoader, at time.Time) error {
	if !f.Follows(key) || f.isLevel(key) {
		return nil
	}
	if err := f.MirrorDeadLetters(ctx, key, load, at); err != nil {
		return err
	}
	f.setLevel(key, true)
	return nil
}

func (f *Follower) mirror(ctx context.Context, key string, load sink.DeadLetterLoader, at time.Time) error {
	dk := dlqKeyOf(key)
	if !f.Follows(key) {
		f.Forget(dk) // delta off: mirror from scratch once it is back
		f.setMirrored(dk, "")
		f.setLevel(key, false)
		return nil
	}
	dlq, err := load(ctx)
	if err != nil {
		return fmt.Errorf("mirroring the dead-letter table of %s to delta: %w", ledger.DisplayName(key), err)
	}
	if dlq == nil {
		return nil // no dead letter yet
	}
	tbl := dlq.Table()
	if tbl.CurrentSnapshot() == nil || f.mirroredAt(dk) == tbl.MetadataLocation() {
		return nil
	}
	if err := f.syncDeadLetters(ctx, key, dlq, at); err != nil {
		f.Forget(dk)
		return fmt.Errorf("mirroring the dead-letter table of %s to delta: %w", ledger.DisplayName(key), err)
	}
	f.setMirrored(dk, tbl.MetadataLocation())
	return nil
}

// syncDeadLetters syncs the dead-letter table's log (opened once per
// process, with its table's checkpoint interval) to its current snapshot.
// A sync may remove files from the log, so it is fenced like a deletion:
// a committer cut off, whose state lags, cannot undo its successor's
// mirror with its stale view.
func (f *Follower) syncDeadLetters(ctx context.Context, key string, dlq sink.FollowedTable, at time.Time) error {
	n := f.interval(key)
	l, ok := f.cached(dlq.Key())
	if !ok {
		var err error
		if l, err = f.read(ctx, dlq.Table().Location(), n); err != nil {
			return err
		}
		f.keep(dlq.Key(), l)
	}
	l.SetCheckpointInterval(n)
	if err := dlq.Fence(ctx); err != nil {
		return err
	}
	return syncLog(ctx, l, dlq, at)
}

// DeadLetterVersion is the version of the Delta log of key's dead-letter
// table that this process last mirrored, false when it mirrored none.
// Call it on key's commit loop, the goroutine that mirrors that log.
func (f *Follower) DeadLetterVersion(key string) (int64, bool) {
	if !f.Follows(key) {
		return 0, false
	}
	l, ok := f.cached(dlqKeyOf(key))
	if !ok || l.Version() < 0 {
		return 0, false
	}
	return l.Version(), true
}

// mirroredAt is the dead-letter table's metadata location this process
// last mirrored to its log ("" for none).
func (f *Follower) mirroredAt(dk string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mirrored[dk]
}

func (f *Follower) setMirrored(dk, loc string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if loc == "" {
		delete(f.mirrored, dk)
		return
	}
	f.mirrored[dk] = loc
}

func (f *Follower) isLevel(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.level[key]
}

func (f *Follower) setLevel(key string, level bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if level {
		f.level[key] = true
		return
	}
	delete(f.level, key)
}
