package worker

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/floe-io/floe/ledger"
	"github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/status"
	"github.com/floe-io/floe/worker/internal/retry"
)

// maxEntriesPerCommit bounds one commit so a long backlog (after an outage)
// is committed in steps of reasonable size.
const maxEntriesPerCommit = 256

// rewriteOutcome is a background compaction's result.
type rewriteOutcome struct {
	rw  sink.Rewrite
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
	b := retry.New()
	tick := time.NewTicker(w.cfg.CommitInterval)
	defer tick.Stop()
	var (
		lastExpire, lastCompact time.Time
		lastOrphans             = time.Now()
		lastAppend              = time.Now() // assume hot after a restart
		recent                  recentFiles  // files committed within the cool-down
		rewriting               chan rewriteOutcome
		planned                 *rewriteOutcome
		budget                  = hourlyBudget{}
		// fencedAt is the role a commit was refused as stale for: while the
		// state still shows it, this node's state lags behind the move, and
		// committing again would only be refused again.
		fencedAt *ledger.Assignment
		wasMine  bool
		// schema requests that failed are retried with backoff
		schemaBackoff = retry.New()
		schemaRetryAt time.Time
	)
	defer func() {
		if rewriting != nil {
			<-rewriting // ctx is done: the rewrite returns promptly
		}
	}()
	maintain := w.maintainChan(table)
	for {
		changed := w.state.Watch()
		a, ok := w.state.Committer(table)
		mine := ok && a.Node == w.cfg.NodeID && (fencedAt == nil || *fencedAt != a)
		if !mine && wasMine {
			// The role moved away: problems of committing and maintaining
			// are the new committer's to report now, not this node's.
			w.status.Update(table, ledger.DisplayName(table), func(t *status.TableStatus) {
				for _, c := range []string{"commit", "compaction", "expiry", "orphan cleanup"} {
					t.Problem(c, "")
				}
			})
		}
		wasMine = mine
		if mine {
			if time.Since(lastExpire) >= w.cfg.ExpireInterval {
				lastExpire = time.Now()
				w.expire(fenceCtx(ctx, table, a), table, log)
			}
			if time.Since(lastOrphans) >= w.cfg.OrphanInterval {
				lastOrphans = time.Now()
				w.cleanOrphans(fenceCtx(ctx, table, a), table, log)
			}
			if m, ok := w.mappingOf(table); ok && rewriting == nil && planned == nil &&
				m.Compaction.On() && time.Since(lastCompact) >= m.Compaction.Interval.D() && m.Compaction.InWindow(time.Now()) {
				lastCompact = time.Now()
				if left := budget.left(int64(m.Compaction.MaxBytesPerHour), time.Now()); left > 0 {
					target := int64(m.Compaction.TargetFileSize)
					if target == 0 {
						target = int64(w.cfg.TargetFileSize)
					}
					pol := sink.CompactionPolicy{TargetFileSize: target, MinInputFiles: m.Compaction.MinInputFiles,
						HotMinInputFiles: m.Compaction.HotMinInputFiles, Hot: time.Since(lastAppend) < m.Compaction.CoolDown.D(),
						HotFiles: recent.since(time.Now().Add(-m.Compaction.CoolDown.D())), SmallRatio: m.Compaction.SmallRatio, MaxBytes: left}
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
				_ = w.commitRewrite(fenceCtx(ctx, table, a), table, *planned, &budget, log) // shown in status
			}
			planned = nil
		}
		// Schema requests first: files that use new columns are recorded
		// only once their request is applied, so appends stay in order.
		if reqs := w.state.SchemaRequests(table); mine && len(reqs) > 0 && time.Now().After(schemaRetryAt) {
			err := w.applySchemas(ctx, table, a, reqs, log) // schemareq.go
			if ctx.Err() != nil {
				return
			}
			switch {
			case w.fenced(err):
				log.Info("committer role is stale; not applying schema requests until the state changes", "epoch", a.Epoch, "err", err)
				fencedAt = &a
				continue
			case err != nil:
				// Shown to the requesting pipelines; appends of others go on.
				log.Warn("applying schema requests failed, retrying", "err", err)
				schemaRetryAt = time.Now().Add(schemaBackoff.Next())
			default:
				schemaBackoff.Reset()
			}
		}
		if ctl := w.state.Control(table); mine && len(ctl.ReplaceFrom) > 0 {
			err := w.replaceDelete(fenceCtx(ctx, table, a), table, ctl, a, log) // operate.go
			if ctx.Err() != nil {
				return
			}
			switch {
			case w.fenced(err):
				fencedAt = &a
				continue
			case err != nil:
				log.Warn("replace rewind delete failed, retrying", "err", err)
				w.status.Update(table, ledger.DisplayName(table), func(t *status.TableStatus) {
					t.CommitFailures++
					t.Problem("commit", "deleting rows for a replace rewind: "+err.Error())
				})
				if !retry.Sleep(ctx, b.Next()) {
					return
				}
				continue
			}
			b.Reset()
			w.status.Update(table, ledger.DisplayName(table), func(t *status.TableStatus) { t.Commits++; t.Problem("commit", "") })
			// The state shows the delete done once applied here; wait for it.
			select {
			case <-ctx.Done():
				return
			case <-changed:
			case <-tick.C:
			}
			continue
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
			if w.fenced(err) {
				// Not a failure: the role moved and this node's state has not
				// caught up yet. Wait until it shows another assignment.
				log.Info("committer role is stale; not committing until the state changes",
					"epoch", a.Epoch, "entries", len(entries), "err", err)
				fencedAt = &a
				b.Reset()
				w.status.Update(table, ledger.DisplayName(table), func(t *status.TableStatus) { t.Problem("commit", "") })
				continue
			}
			if err != nil {
				log.Warn("commit failed, retrying", "entries", len(entries), "err", err)
				w.status.Update(table, ledger.DisplayName(table), func(t *status.TableStatus) {
					t.CommitFailures++
					t.Problem("commit", err.Error())
				})
				if !retry.Sleep(ctx, b.Next()) {
					return
				}
				continue
			}
			b.Reset()
			lastAppend = time.Now()
			recent.add(entries, lastAppend)
			log.Debug("committed", "entries", len(entries), "took", time.Since(start))
			if w.cfg.OnCommit != nil {
				w.cfg.OnCommit(ledger.DisplayName(table), time.Since(start))
			}
			w.status.Update(table, ledger.DisplayName(table), func(t *status.TableStatus) {
				t.Commits++
				t.Problem("commit", "")
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
		case req := <-maintain:
			req.reply <- w.maintainNow(ctx, table, mine, a, &budget, log)
		}
	}
}

// MaintenanceResult is what a maintenance run on demand did.
type MaintenanceResult struct {
	Table            string `json:"table"`
	SnapshotsExpired int    `json:"snapshots_expired"`
	OrphansDeleted   int    `json:"orphan_files_deleted"`
	FilesRewritten   int    `json:"files_rewritten"`
	FilesWritten     int    `json:"files_written"`
	BytesRewritten   int64  `json:"bytes_rewritten"`
}

type maintainReq struct {
	reply chan maintainReply
}

type maintainReply struct {
	res MaintenanceResult
	err error
}

// ErrNotCommitter: the table's committer role is held by another node.
var ErrNotCommitter = errors.New("this node does not commit the table")

func (w *Worker) maintainChan(table string) chan maintainReq {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.maintain == nil {
		w.maintain = map[string]chan maintainReq{}
	}
	ch, ok := w.maintain[table]
	if !ok {
		ch = make(chan maintainReq)
		w.maintain[table] = ch
	}
	return ch
}

// Maintain runs a table's maintenance now (expiry, orphan cleanup and a
// compaction that ignores the hot-table bound and the window), in its
// commit loop so it serializes with appends, and reports what it did.
func (w *Worker) Maintain(ctx context.Context, table string) (MaintenanceResult, error) {
	w.mu.Lock()
	_, known := w.commits[table]
	w.mu.Unlock()
	if !known {
		return MaintenanceResult{}, fmt.Errorf("table %s: %w", ledger.DisplayName(table), ErrUnknownTable)
	}
	req := maintainReq{reply: make(chan maintainReply, 1)}
	select {
	case w.maintainChan(table) <- req:
	case <-ctx.Done():
		return MaintenanceResult{}, ctx.Err()
	}
	select {
	case r := <-req.reply:
		return r.res, r.err
	case <-ctx.Done():
		return MaintenanceResult{}, ctx.Err()
	}
}

// ErrUnknownTable: no mapping routes into the table.
var ErrUnknownTable = errors.New("no mapping writes this table")

// maintainNow runs maintenance on demand; its commits are fenced by a, the
// role the loop read.
func (w *Worker) maintainNow(ctx context.Context, table string, mine bool, a ledger.Assignment, budget *hourlyBudget, log interface {
	Warn(string, ...any)
	Info(string, ...any)
}) maintainReply {
	res := MaintenanceResult{Table: ledger.DisplayName(table)}
	if !mine {
		return maintainReply{res: res, err: ErrNotCommitter}
	}
	m, ok := w.mappingOf(table)
	if !ok {
		return maintainReply{res: res, err: ErrUnknownTable}
	}
	before, _ := w.status.Snapshot()
	w.expire(fenceCtx(ctx, table, a), table, log)
	if after, _ := w.status.Snapshot(); strings.Contains(after[table].Reason, "expiry:") {
		return maintainReply{res: res, err: fmt.Errorf("expiring snapshots: %s", after[table].Reason)}
	}
	keep := w.keepFiles(table)
	n, _, err := w.sink.CleanOrphans(fenceCtx(ctx, table, a), table, m.OrphanMinAge.D(), keep)
	if err != nil {
		return maintainReply{res: res, err: err}
	}
	res.OrphansDeleted = n
	target := int64(m.Compaction.TargetFileSize)
	if target == 0 {
		target = int64(w.cfg.TargetFileSize)
	}
	rw, err := w.sink.PlanRewrite(ctx, table, sink.CompactionPolicy{TargetFileSize: target, MinInputFiles: m.Compaction.MinInputFiles,
		HotMinInputFiles: m.Compaction.MinInputFiles, MaxBytes: 1 << 62})
	if err := w.commitRewrite(fenceCtx(ctx, table, a), table, rewriteOutcome{rw: rw, err: err}, budget, log); err != nil {
		return maintainReply{res: res, err: err}
	}
	after, _ := w.status.Snapshot()
	res.SnapshotsExpired = int(after[table].SnapshotsExpired - before[table].SnapshotsExpired)
	if d := after[table].Compactions - before[table].Compactions; d > 0 && rw != nil {
		st := rw.Stats()
		res.FilesRewritten, res.FilesWritten, res.BytesRewritten = st.FilesBefore, st.FilesAfter, st.BytesBefore
	}
	return maintainReply{res: res}
}

// recentFiles remembers when this loop committed each data file, so that
// compaction knows which partitions are still being written.
type recentFiles struct {
	started time.Time
	at      map[string]time.Time // file base name -> commit time
}

func (r *recentFiles) add(entries []ledger.Entry, now time.Time) {
	if r.at == nil {
		r.at, r.started = map[string]time.Time{}, now
	}
	for _, e := range entries {
		for _, f := range e.Files {
			r.at[path.Base(f.Path)] = now
		}
	}
}

// since returns the files committed after t, nil when the loop has not
// been running that long (then the whole table counts as hot).
func (r *recentFiles) since(t time.Time) map[string]bool {
	if r.at == nil || r.started.After(t) {
		return nil
	}
	out := map[string]bool{}
	for f, at := range r.at {
		if at.After(t) {
			out[f] = true
		} else {
			delete(r.at, f)
		}
	}
	return out
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
}) error {
	err := out.err
	var st sink.RewriteStats
	if out.rw != nil {
		st = out.rw.Stats()
	}
	if err == nil && st.FilesBefore > 0 {
		err = w.sink.CommitRewrite(ctx, table, out.rw)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	msg := ""
	if err != nil {
		log.Warn("compaction abandoned; planning again next run", "err", err)
		msg = err.Error()
	} else if st.FilesBefore > 0 {
		budget.used += st.BytesBefore
		log.Info("compacted", "files_before", st.FilesBefore, "files_after", st.FilesAfter, "bytes_before", st.BytesBefore, "bytes_after", st.BytesAfter)
	}
	w.status.Update(table, ledger.DisplayName(table), func(t *status.TableStatus) {
		t.Problem("compaction", msg)
		if out.rw != nil {
			t.DataFiles, t.SmallFiles, t.DataBytes = st.DataFiles, st.SmallFiles, st.Bytes
		}
		if err == nil && st.FilesBefore > 0 {
			t.Compactions++
			t.FilesRewritten += int64(st.FilesBefore)
			t.BytesRewritten += st.BytesBefore
			t.LastCompaction = time.Now()
			t.DataFiles += st.FilesAfter - st.FilesBefore
			t.SmallFiles = max(0, t.SmallFiles-st.FilesBefore) + st.SmallAfter
		}
	})
	return err
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
	w.status.Update(table, ledger.DisplayName(table), func(t *status.TableStatus) {
		t.Problem("expiry", msg)
		if n > 0 {
			t.SnapshotsExpired += int64(n)
			t.LastExpiry = time.Now()
		}
	})
}

// keepFiles names every file a pending ledger entry of the table names.
func (w *Worker) keepFiles(table string) map[string]bool {
	keep := map[string]bool{}
	for _, e := range w.state.Pending(table) {
		for _, f := range e.Files {
			keep[f.Path] = true
		}
		for _, f := range e.DLQFiles {
			keep[f.Path] = true
		}
	}
	return keep
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
	n, bytes, err := w.sink.CleanOrphans(ctx, table, m.OrphanMinAge.D(), w.keepFiles(table))
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
	w.status.Update(table, ledger.DisplayName(table), func(t *status.TableStatus) {
		t.Problem("orphan cleanup", msg)
		t.OrphansDeleted += int64(n)
		if err == nil {
			t.LastOrphanCleanup = time.Now()
		}
	})
}
