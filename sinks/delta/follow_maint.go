package delta

import (
	"context"
	"fmt"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

// Rearrange publishes a committed compaction to the table's log: its
// removes and adds with dataChange false, no txn (it moves no offsets).
// The sink calls it after the Iceberg commit, so a compaction refused
// there never reaches the log; when the publish fails the log is synced at
// the next append, and orphan cleanup spares the files the log still
// references. A log not open in this process is left alone: opening it
// syncs it with the compacted table.
func (f *Follower) Rearrange(ctx context.Context, t sink.FollowedTable, r sink.FollowedRewrite) error {
	l, ok := f.cached(t.Key())
	if !ok {
		return nil
	}
	offsets, err := t.Offsets()
	if err != nil {
		return err
	}
	c := Commit{Table: tableOf(t), CommitID: r.CommitID, Offsets: offsets, Rearrange: true, At: r.At}
	for _, fl := range r.Removed {
		c.Remove = append(c.Remove, File{FileDescriptor: fl.FileDescriptor, WrittenAt: fl.WrittenAt})
	}
	for _, fl := range r.Added {
		c.Add = append(c.Add, File{FileDescriptor: fl.FileDescriptor, WrittenAt: fl.WrittenAt})
	}
	if _, err := l.Publish(ctx, c); err != nil {
		f.Forget(t.Key())
		return err
	}
	return nil
}

// Resync re-reads the table's log and makes its live files the committed
// table's (a commit that changed files without a version of its own: a
// replace delete).
func (f *Follower) Resync(ctx context.Context, t sink.FollowedTable, at time.Time) error {
	f.Forget(t.Key())
	if _, err := f.open(ctx, t, at); err != nil {
		f.Forget(t.Key())
		return err
	}
	return nil
}

// Referenced names the data files and deletion vector files t's log
// references, live or removed but still in its tombstones (paths relative
// to the table root; orphan cleanup matches them by base name, unique per
// write), so that cleanup spares them while a Delta reader may still read
// them. It opens the log apart from the commit loop's (a Log is not safe
// for concurrent use): orphan cleanup runs in the background.
func (f *Follower) Referenced(ctx context.Context, t sink.FollowedTable) (map[string]bool, error) {
	l, err := f.read(ctx, t.Table().Location(), f.opts.CheckpointInterval)
	if err != nil {
		return nil, fmt.Errorf("reading the delta log of %s: %w", ledger.DisplayName(t.Key()), err)
	}
	out := map[string]bool{}
	for _, p := range l.Referenced() {
		out[p] = true
	}
	return out, nil
}

// CleanLog deletes the entries of the log under t's root (the table key's,
// or its dead-letter table's) past key's retention (its
// delta.log_retention, by default DefaultLogRetention, 30 days), keeping
// the checkpoint readers start from; it runs behind orphan cleanup's
// fence.
func (f *Follower) CleanLog(ctx context.Context, key string, t sink.FollowedTable) error {
	l, err := f.read(ctx, t.Table().Location(), f.opts.CheckpointInterval)
	if err != nil {
		return fmt.Errorf("reading the delta log of %s: %w", ledger.DisplayName(t.Key()), err)
	}
	retention := DefaultLogRetention
	if r := f.tables.DeltaSettings(key).LogRetention; r > 0 {
		retention = r
	}
	n, err := l.Cleanup(ctx, retention)
	if n > 0 {
		f.log.Info("deleted delta log entries past the retention", "table", ledger.DisplayName(t.Key()), "files", n)
	}
	return err
}
