package worker

import (
	"context"
	"time"

	"github.com/floe-io/floe/ledger"
)

// maxEntriesPerCommit bounds one commit so a long backlog (after an outage)
// is committed in steps of reasonable size.
const maxEntriesPerCommit = 256

// commitLoop commits a table's recorded files whenever this node holds its
// committer role and the ledger has entries pending. It wakes on every state
// change, so a flush is committed as soon as it is recorded.
func (w *Worker) commitLoop(ctx context.Context, table string) {
	log := w.log.With("table", ledger.DisplayName(table), "role", "committer")
	b := newBackoff()
	tick := time.NewTicker(w.cfg.CommitInterval)
	defer tick.Stop()
	var lastExpire time.Time
	lastOrphans := time.Now()
	for {
		if a, ok := w.state.Committer(table); ok && a.Node == w.cfg.NodeID {
			if time.Since(lastExpire) >= w.cfg.ExpireInterval {
				lastExpire = time.Now()
				w.expire(ctx, table, log)
			}
			if time.Since(lastOrphans) >= w.cfg.OrphanInterval {
				lastOrphans = time.Now()
				w.cleanOrphans(ctx, table, log)
			}
		}
		changed := w.state.Watch()
		a, ok := w.state.Committer(table)
		entries := w.state.Pending(table)
		if ok && a.Node == w.cfg.NodeID && len(entries) > 0 {
			if len(entries) > maxEntriesPerCommit {
				entries = entries[:maxEntriesPerCommit]
			}
			start := time.Now()
			err := w.sink.Commit(ctx, table, entries, a, time.Now())
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				log.Warn("commit failed, retrying", "entries", len(entries), "err", err)
				w.status.update(table, ledger.DisplayName(table), func(t *TableStatus) {
					t.CommitFailures++
					t.problem("commit", err.Error())
				})
				if !sleep(ctx, b.next()) {
					return
				}
				continue
			}
			b.reset()
			log.Debug("committed", "entries", len(entries), "took", time.Since(start))
			w.status.update(table, ledger.DisplayName(table), func(t *TableStatus) {
				t.Commits++
				t.problem("commit", "")
			})
			continue // more may be pending
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-tick.C:
		}
	}
}

// expire trims a table's snapshot history per its mapping. A failure is
// shown in status and retried at the next interval; it never blocks commits.
func (w *Worker) expire(ctx context.Context, table string, log interface {
	Warn(string, ...any)
	Info(string, ...any)
}) {
	m, ok := w.mappingOf(table)
	if !ok {
		return
	}
	n, err := w.sink.Expire(ctx, table, m.SnapshotMaxAge.D(), m.SnapshotMaxCount, time.Now())
	if ctx.Err() != nil {
		return
	}
	msg := ""
	if err != nil {
		log.Warn("expiring snapshots", "err", err)
		msg = err.Error()
	} else if n > 0 {
		log.Info("expired snapshots", "count", n)
	}
	w.status.update(table, ledger.DisplayName(table), func(t *TableStatus) {
		t.problem("expiry", msg)
		if n > 0 {
			t.SnapshotsExpired += int64(n)
			t.LastExpiry = time.Now()
		}
	})
}

// cleanOrphans deletes a table's orphan files, sparing every file the ledger
// has recorded. Like expiry it never blocks commits.
func (w *Worker) cleanOrphans(ctx context.Context, table string, log interface {
	Warn(string, ...any)
	Info(string, ...any)
}) {
	m, ok := w.mappingOf(table)
	if !ok {
		return
	}
	keep := map[string]bool{}
	for _, e := range w.state.Pending(table) {
		for _, f := range e.Files {
			keep[f.Path] = true
		}
		for _, f := range e.DLQFiles {
			keep[f.Path] = true
		}
	}
	n, bytes, err := w.sink.CleanOrphans(ctx, table, m.OrphanMinAge.D(), keep)
	if ctx.Err() != nil {
		return
	}
	msg := ""
	if err != nil {
		log.Warn("cleaning orphan files", "err", err)
		msg = err.Error()
	} else if n > 0 {
		log.Info("deleted orphan files", "files", n, "bytes", bytes)
	}
	w.status.update(table, ledger.DisplayName(table), func(t *TableStatus) {
		t.problem("orphan cleanup", msg)
		t.OrphansDeleted += int64(n)
		if err == nil {
			t.LastOrphanCleanup = time.Now()
		}
	})
}
