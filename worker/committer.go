package worker

import (
	"context"
	"time"

	"github.com/floe-io/floe/ledger"
)

// maxEntriesPerCommit bounds one commit so a long backlog (after an outage)
// is committed in steps of reasonable size.
const maxEntriesPerCommit = 256

// rewriteOutcome is a background compaction's result.
type rewriteOutcome struct {
	rw  Rewrite
	err error
}

// commitLoop commits a table's recorded files whenever this node holds its
// committer role and the ledger has entries pending. It wakes on every state
// change, so a flush is committed as soon as it is recorded. It also runs the
// table's maintenance: expiry, orphan cleanup and compaction, whose rewrite
// runs in the background and whose commit is made here, in order with the
// appends, so that the table has a single writer.
func (w *Worker) commitLoop(ctx context.Context, table string) {
	log := w.log.With("table", ledger.DisplayName(table), "role", "committer")
	b := newBackoff()
	tick := time.NewTicker(w.cfg.CommitInterval)
	defer tick.Stop()
	var (
		lastExpire, lastCompact time.Time
		lastOrphans             = time.Now()
		lastAppend              = time.Now() // assume hot after a restart
		rewriting               chan rewriteOutcome
		planned                 *rewriteOutcome
		budget                  = hourlyBudget{}
	)
	defer func() {
		if rewriting != nil {
			<-rewriting // ctx is done: the rewrite returns promptly
		}
	}()
	for {
		changed := w.state.Watch()
		a, ok := w.state.Committer(table)
		mine := ok && a.Node == w.cfg.NodeID
		if mine {
			if time.Since(lastExpire) >= w.cfg.ExpireInterval {
				lastExpire = time.Now()
				w.expire(ctx, table, log)
			}
			if time.Since(lastOrphans) >= w.cfg.OrphanInterval {
				lastOrphans = time.Now()
				w.cleanOrphans(ctx, table, log)
			}
			if m, ok := w.mappingOf(table); ok && rewriting == nil && planned == nil &&
				m.Compaction.On() && time.Since(lastCompact) >= m.Compaction.Interval.D() && m.Compaction.InWindow(time.Now()) {
				lastCompact = time.Now()
				if left := budget.left(int64(m.Compaction.MaxBytesPerHour), time.Now()); left > 0 {
					target := int64(m.Compaction.TargetFileSize)
					if target == 0 {
						target = int64(w.cfg.TargetFileSize)
					}
					pol := CompactionPolicy{TargetFileSize: target, MinInputFiles: m.Compaction.MinInputFiles,
						HotMinInputFiles: m.Compaction.HotMinInputFiles, Hot: time.Since(lastAppend) < m.Compaction.CoolDown.D(), MaxBytes: left}
					rewriting = make(chan rewriteOutcome, 1)
					go func(out chan<- rewriteOutcome) {
						rw, err := w.sink.PlanRewrite(ctx, table, pol)
						out <- rewriteOutcome{rw: rw, err: err}
					}(rewriting)
				}
			}
		}
		if planned != nil {
			if mine {
				w.commitRewrite(ctx, table, *planned, &budget, log)
			}
			planned = nil
		}
		entries := w.state.Pending(table)
		if mine && len(entries) > 0 {
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
			lastAppend = time.Now()
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
		case out := <-rewriting:
			rewriting, planned = nil, &out
		}
	}
}

// hourlyBudget tracks the input bytes compaction rewrote in the current hour.
type hourlyBudget struct {
	start time.Time
	used  int64
}

func (h *hourlyBudget) left(limit int64, now time.Time) int64 {
	if now.Sub(h.start) >= time.Hour {
		h.start, h.used = now, 0
	}
	return limit - h.used
}

// commitRewrite commits a background rewrite, or abandons it on a conflict
// (the next run plans again). Never blocks appends for long: the expensive
// part already ran.
func (w *Worker) commitRewrite(ctx context.Context, table string, out rewriteOutcome, budget *hourlyBudget, log interface {
	Warn(string, ...any)
	Info(string, ...any)
}) {
	err := out.err
	var st RewriteStats
	if out.rw != nil {
		st = out.rw.Stats()
	}
	if err == nil && st.FilesBefore > 0 {
		err = w.sink.CommitRewrite(ctx, table, out.rw)
	}
	if ctx.Err() != nil {
		return
	}
	msg := ""
	if err != nil {
		log.Warn("compaction abandoned; planning again next run", "err", err)
		msg = err.Error()
	} else if st.FilesBefore > 0 {
		budget.used += st.BytesBefore
		log.Info("compacted", "files_before", st.FilesBefore, "files_after", st.FilesAfter, "bytes_before", st.BytesBefore, "bytes_after", st.BytesAfter)
	}
	w.status.update(table, ledger.DisplayName(table), func(t *TableStatus) {
		t.problem("compaction", msg)
		if out.rw != nil {
			t.DataFiles, t.SmallFiles, t.DataBytes = st.DataFiles, st.SmallFiles, st.Bytes
		}
		if err == nil && st.FilesBefore > 0 {
			t.Compactions++
			t.FilesRewritten += int64(st.FilesBefore)
			t.BytesRewritten += st.BytesBefore
			t.LastCompaction = time.Now()
			t.DataFiles += st.FilesAfter - st.FilesBefore
			t.SmallFiles = max(0, t.SmallFiles-st.FilesBefore)
		}
	})
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
