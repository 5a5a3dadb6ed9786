package commit

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/sinks/sink"
)

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
	force bool // compact even when the mapping disables compaction
	reply chan maintainReply
}

type maintainReply struct {
	res MaintenanceResult
	err error
}

// rewriteOutcome is a background compaction's result.
type rewriteOutcome struct {
	rw  sink.Rewrite
	err error
}

// maintainNow runs maintenance on demand; its commits are fenced by a, the
// role the loop read.
func (c *Committer) maintainNow(ctx context.Context, table string, req maintainReq, mine bool, a ledger.Assignment, budget *hourlyBudget, log *slog.Logger) maintainReply {
	res := MaintenanceResult{Table: ledger.DisplayName(table)}
	if !mine {
		return maintainReply{res: res, err: ErrNotCommitter}
	}
	_, m, ok := c.lookup(table)
	if !ok {
		return maintainReply{res: res, err: ErrUnknownTable}
	}
	// An operator who disabled compaction (to keep files as written for a
	// downstream copy, or to schedule it elsewhere) meant it: maintenance
	// on demand does not quietly compact; --force says otherwise.
	if !m.Compaction.On() && !req.force {
		return maintainReply{res: res, err: fmt.Errorf("table %s: %w (compaction.enabled is false in its mapping; run `floe ctl tables maintain --force %s` to compact it anyway)",
			res.Table, ErrCompactionDisabled, res.Table)}
	}
	before, _ := c.status.Snapshot()
	c.expire(ctx, table, a, log)
	if after, _ := c.status.Snapshot(); strings.Contains(after[table].Reason, "expiry:") {
		return maintainReply{res: res, err: fmt.Errorf("expiring snapshots: %s", after[table].Reason)}
	}
	keep := c.keepFiles(table)
	n, _, err := c.sink.CleanOrphans(ctx, table, m.OrphanMinAge.D(), keep, a)
	if err != nil {
		return maintainReply{res: res, err: err}
	}
	res.OrphansDeleted = n
	target := int64(m.Compaction.TargetFileSize)
	if target == 0 {
		target = int64(c.cfg.TargetFileSize)
	}
	rw, err := c.sink.PlanRewrite(ctx, table, sink.CompactionPolicy{TargetFileSize: target, MinInputFiles: m.Compaction.MinInputFiles,
		HotMinInputFiles: m.Compaction.MinInputFiles, MaxBytes: 1 << 62})
	if err := c.commitRewrite(ctx, table, a, rewriteOutcome{rw: rw, err: err}, budget, log); err != nil {
		return maintainReply{res: res, err: err}
	}
	after, _ := c.status.Snapshot()
	res.SnapshotsExpired = int(after[table].SnapshotsExpired - before[table].SnapshotsExpired)
	if d := after[table].Compactions - before[table].Compactions; d > 0 && rw != nil {
		st := rw.Stats()
		res.FilesRewritten, res.FilesWritten, res.BytesRewritten = st.FilesBefore, st.FilesAfter, st.BytesBefore
	}
	return maintainReply{res: res}
}

// commitRewrite commits a background rewrite as committer a, or abandons it
// on a conflict (the next run plans again). Never blocks appends for long:
// the expensive part already ran.
func (c *Committer) commitRewrite(ctx context.Context, table string, a ledger.Assignment, out rewriteOutcome, budget *hourlyBudget, log *slog.Logger) error {
	err := out.err
	var st sink.RewriteStats
	if out.rw != nil {
		st = out.rw.Stats()
	}
	if err == nil && st.FilesBefore > 0 {
		err = c.sink.CommitRewrite(ctx, table, out.rw, a, time.Now())
		st = out.rw.Stats() // a sink may plan again at the commit (an upsert table's)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	msg := st.Skipped
	if err != nil {
		log.Warn("compaction abandoned; planning again next run", "err", err)
		msg = err.Error()
	} else if st.FilesBefore > 0 {
		budget.used += st.BytesBefore
		log.Info("compacted", "files_before", st.FilesBefore, "files_after", st.FilesAfter, "bytes_before", st.BytesBefore, "bytes_after", st.BytesAfter,
			"delete_files_removed", st.DeleteFilesRemoved)
	}
	c.update(table, func(t *status.TableStatus) {
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

// expire trims a table's snapshot history per its mapping, as committer a.
// A failure is shown in status and retried at the next interval; it never
// blocks commits.
func (c *Committer) expire(ctx context.Context, table string, a ledger.Assignment, log *slog.Logger) {
	_, m, ok := c.lookup(table)
	if !ok {
		return
	}
	n, err := c.sink.Expire(ctx, table, m.SnapshotMaxAge.D(), m.SnapshotMaxCount, time.Now(), a)
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
	c.update(table, func(t *status.TableStatus) {
		t.Problem("expiry", msg)
		if n > 0 {
			t.SnapshotsExpired += int64(n)
			t.LastExpiry = time.Now()
		}
	})
}

// keepFiles names every file a pending ledger entry of the table names.
func (c *Committer) keepFiles(table string) map[string]bool {
	keep := map[string]bool{}
	for _, e := range c.state.Pending(table) {
		for _, f := range e.Files {
			keep[f.Path] = true
		}
		for _, f := range e.DLQFiles {
			keep[f.Path] = true
		}
	}
	return keep
}

// orphanOutcome is a background orphan cleanup's result.
type orphanOutcome struct {
	files int
	bytes int64
	err   error
}

// startCleanup starts orphan cleanup of a table as committer a in the
// background, sparing every file the ledger has recorded, and returns the
// channel its outcome arrives on (nil when no mapping routes into the
// table). It runs off the commit loop: listing a large table and the fence
// before deleting take long, and appends go on meanwhile. The sink fences
// the deletion itself (a read barrier and the role re-checked).
func (c *Committer) startCleanup(ctx context.Context, table string, a ledger.Assignment) chan orphanOutcome {
	_, m, ok := c.lookup(table)
	if !ok {
		return nil
	}
	keep := c.keepFiles(table)
	out := make(chan orphanOutcome, 1)
	go func() {
		n, bytes, err := c.sink.CleanOrphans(ctx, table, m.OrphanMinAge.D(), keep, a)
		out <- orphanOutcome{files: n, bytes: bytes, err: err}
	}()
	return out
}

// orphansDone reports an orphan cleanup's outcome in status. A refusal
// because the role moved is not a failure: the new committer cleans; nor is
// any failure once the loop saw the role move (mine is false). Any other
// failure (the fence's barrier included) is shown and retried at the next
// interval.
func (c *Committer) orphansDone(ctx context.Context, table string, out orphanOutcome, mine bool, log *slog.Logger) {
	if ctx.Err() != nil {
		return
	}
	msg := ""
	switch {
	case c.fenced(out.err) || (out.err != nil && !mine):
		log.Info("orphan cleanup refused: the committer role moved; deleted nothing", "err", out.err)
	case out.err != nil:
		log.Warn("cleaning orphan files", "err", out.err)
		msg = out.err.Error()
	case out.files > 0:
		log.Info("deleted orphan files", "files", out.files, "bytes", out.bytes)
	}
	c.update(table, func(t *status.TableStatus) {
		t.Problem("orphan cleanup", msg)
		t.OrphansDeleted += int64(out.files)
		if out.err == nil {
			t.LastOrphanCleanup = time.Now()
		}
	})
}
