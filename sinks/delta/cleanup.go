package delta

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// DefaultLogRetention is how long log entries are kept for time travel
// before Cleanup may delete them (the log_retention, 30 days, as
// Delta's delta.logRetentionDuration default).
const DefaultLogRetention = 30 * 24 * time.Hour

// Cleanup deletes the log entries older than retention, as the protocol's
// "Metadata Cleanup" says: it finds the newest checkpoint whose version was
// committed at or before now - retention, keeps that checkpoint, its commit
// file and everything after, and deletes the commit files and checkpoints
// before it. Without such a checkpoint it deletes nothing. It returns how
// many files it deleted. Data files are not its business: a removed file
// may still be live in the Iceberg view and is deleted, if ever, by the
// fenced orphan cleanup.
func (l *Log) Cleanup(ctx context.Context, retention time.Duration) (int, error) {
	names, err := l.st.List(ctx, logDir, "")
	if err != nil {
		return 0, fmt.Errorf("listing the delta log for cleanup: %w", err)
	}
	var cps []int64
	for _, n := range names {
		if v, cp, ok := parseLogName(n); ok && cp {
			cps = append(cps, v)
		}
	}
	slices.Sort(cps)
	cutoff := l.opts.Now().Add(-retention).UnixMilli()
	keep := int64(-1)
	for i := len(cps) - 1; i >= 0 && keep < 0; i-- {
		if at, ok := commitTime(ctx, l, cps[i]); ok && at <= cutoff {
			keep = cps[i]
		}
	}
	if keep <= 0 {
		return 0, nil
	}
	deleted := 0
	for _, n := range names {
		v, _, ok := parseLogName(n)
		if !ok || v >= keep {
			continue
		}
		if err := l.st.Delete(ctx, logDir+"/"+n); err != nil {
			return deleted, fmt.Errorf("log cleanup before version %d: %w", keep, err)
		}
		deleted++
	}
	return deleted, nil
}

// commitTime is the commitInfo timestamp of version v; ok is false when
// the commit file or its commitInfo is gone.
func commitTime(ctx context.Context, l *Log, v int64) (int64, bool) {
	actions, err := readCommit(ctx, l.st, v)
	if err != nil {
		// A missing or unreadable commit file cannot date its checkpoint:
		// the checkpoint is not a cutoff, an older one may be.
		return 0, false
	}
	for _, a := range actions {
		if a.CommitInfo != nil {
			return a.CommitInfo.Timestamp, true
		}
	}
	return 0, false
}
