package delta

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

// Tables is what the follower asks of the node about a table's Delta log:
// whether its mapping's formats name delta, the last Delta commit the
// replicated state recorded for it, and its log settings. The node
// implements it over the worker's routes and its Raft node.
type Tables interface {
	WritesDelta(key string) bool
	DeltaRecorded(key string) (ledger.DeltaCommit, bool)
	DeltaSettings(key string) Settings
}

// Settings tune one table's Delta log; zero values are the defaults
// (DefaultCheckpointInterval, DefaultLogRetention).
type Settings struct {
	CheckpointInterval int64
	LogRetention       time.Duration
}

// Follower keeps a Delta Lake log beside each Iceberg table that writes one,
// over the Iceberg table's own data files: it is the Iceberg sink's
// follower (sinks/iceberg.Follower). A table's log is published before the
// replicated entry that records it (Publish), so a crash in between is
// found in the log's tail and adopted; its dead-letter table's log mirrors
// that table's committed state after each commit instead (follow_dlq.go).
//
// Every call for one table runs on that table's commit loop; the maps are
// shared between tables, hence the mutex.
type Follower struct {
	tables Tables
	props  map[string]string // warehouse IO properties, for s3:// roots
	opts   Options
	log    *slog.Logger

	mu   sync.Mutex
	logs map[string]*Log // by table key; opened (and synced) on first use
	// mirrored is, by dead-letter table key, the metadata location last
	// mirrored to its log by this process.
	mirrored map[string]string
	// level is, by table key, whether this process brought the table's
	// dead-letter log level with its commits; absent: not known to be.
	level map[string]bool
}

// NewFollower returns the follower of the tables t says write a Delta log,
// reading and writing them with the warehouse's IO properties; log nil is
// slog.Default().
func NewFollower(t Tables, props map[string]string, opts Options, log *slog.Logger) *Follower {
	if log == nil {
		log = slog.Default()
	}
	return &Follower{tables: t, props: props, opts: opts, log: log,
		logs: map[string]*Log{}, mirrored: map[string]string{}, level: map[string]bool{}}
}

// Follows reports whether table key writes a Delta log.
func (f *Follower) Follows(key string) bool { return f.tables.WritesDelta(key) }

// Forget drops a table's open log: the next commit re-reads its tail and
// syncs it with the Iceberg table. Called after any failure whose outcome
// is unknown and after a commit the log did not follow.
func (f *Follower) Forget(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.logs, key)
}

func (f *Follower) cached(key string) (*Log, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.logs[key]
	return l, ok
}

func (f *Follower) keep(key string, l *Log) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs[key] = l
}

// interval is table key's checkpoint interval: its mapping's, else the
// follower's default.
func (f *Follower) interval(key string) int64 {
	if n := f.tables.DeltaSettings(key).CheckpointInterval; n > 0 {
		return n
	}
	return f.opts.CheckpointInterval
}

// read opens the log under location with checkpoint interval n.
func (f *Follower) read(ctx context.Context, location string, n int64) (*Log, error) {
	st, err := OpenStore(ctx, location, f.props)
	if err != nil {
		return nil, err
	}
	opts := f.opts
	opts.CheckpointInterval = n
	return Open(ctx, st, opts)
}

// open returns the table's log, opening it when this process has not yet:
// then the log's tail is read and, unless it holds the commit recorded
// next (published before a crash, adopted by the caller), its live files
// are made the Iceberg table's (Log.Sync): the first version of a log
// added to an existing table, or the catch-up of one that missed changes
// while the commit loop was not following it.
func (f *Follower) open(ctx context.Context, t sink.FollowedTable, at time.Time) (*Log, error) {
	key := t.Key()
	n := f.interval(key)
	if l, ok := f.cached(key); ok {
		l.SetCheckpointInterval(n) // the mapping may have changed it since
		return l, nil
	}
	l, err := f.read(ctx, t.Table().Location(), n)
	if err != nil {
		return nil, err
	}
	// A sync may remove files from the log: like a deletion it is fenced
	// (the state proved current, the role re-checked), so a committer cut
	// off cannot undo its successor's versions with its stale table.
	if err := t.Fence(ctx); err != nil {
		return nil, err
	}
	rec, _ := f.tables.DeltaRecorded(key)
	// have < rec: the log lost versions (deleted or restored by hand); it
	// is synced, and a log that still names an older sequence is then
	// refused at publish (ErrSequenceGap).
	if have, _ := l.Txn(tableOf(t).ID); have <= rec.Sequence && t.Table().CurrentSnapshot() != nil {
		if err := syncLog(ctx, l, t, at); err != nil {
			return nil, err
		}
	}
	f.keep(key, l)
	return l, nil
}

// tableOf describes t for its log: an upsert table's log carries its
// position deletes as deletion vectors.
func tableOf(t sink.FollowedTable) Table {
	dt := TableOf(t.Table().Metadata(), ledger.DisplayName(t.Key()))
	dt.DeletionVectors = t.Upsert()
	return dt
}

// syncLog makes the log's live files the table's current snapshot's, with
// the snapshot's offsets and id in its commitInfo; when the table only
// compacted since the log's head, the version is an OPTIMIZE with
// dataChange false.
func syncLog(ctx context.Context, l *Log, t sink.FollowedTable, at time.Time) error {
	offsets, err := t.Offsets()
	if err != nil {
		return err
	}
	files, err := t.LiveFiles(ctx)
	if err != nil {
		return err
	}
	live := make([]File, 0, len(files))
	for _, fd := range files {
		live = append(live, File{FileDescriptor: fd})
	}
	head, err := l.Head(ctx)
	if err != nil {
		return err
	}
	c := Commit{Table: tableOf(t), CommitID: fmt.Sprintf("%s%d", sink.SyncCommitPrefix, t.Table().CurrentSnapshot().SnapshotID),
		Offsets: offsets, At: at, Rearrange: head != nil && t.RearrangedSince(head.CommitID)}
	if c.Table.DeletionVectors {
		if c.Deletes, err = t.DeletedRows(ctx); err != nil {
			return fmt.Errorf("reading the deleted rows for the delta log: %w", err)
		}
	}
	if _, err := l.Sync(ctx, c, live); err != nil {
		return fmt.Errorf("adding the iceberg table's files to its delta log: %w", err)
	}
	return nil
}

// Publish publishes an append as the table's next Delta version, one past
// the sequence the replicated state recorded, and returns what the entry
// that commits it records. When the log already holds that sequence it
// returns a *sink.FollowerConflict naming what it holds; the sink adopts
// it and publishes again, which finds it there and writes nothing. On any
// error the caller forgets the log.
func (f *Follower) Publish(ctx context.Context, t sink.FollowedTable, a sink.FollowedAppend) (ledger.DeltaCommit, error) {
	name := ledger.DisplayName(t.Key())
	l, err := f.open(ctx, t, a.At)
	if err != nil {
		return ledger.DeltaCommit{}, fmt.Errorf("opening the delta log of %s: %w", name, err)
	}
	rec, _ := f.tables.DeltaRecorded(t.Key())
	seq := rec.Sequence + 1
	c := Commit{Table: tableOf(t), Sequence: seq, CommitID: a.CommitID, Offsets: a.Offsets, Entries: a.Entries, At: a.At, Deletes: a.Deletes}
	for _, fl := range a.Files {
		c.Add = append(c.Add, File{FileDescriptor: fl.FileDescriptor, WrittenAt: fl.WrittenAt})
	}
	res, err := l.Publish(ctx, c)
	if conflict, ok := errors.AsType[*SequenceConflictError](err); ok {
		return ledger.DeltaCommit{}, &sink.FollowerConflict{Sequence: conflict.Sequence, Version: conflict.Version,
			CommitID: conflict.CommitID, Offsets: conflict.Offsets, Entries: conflict.Entries}
	}
	if err != nil {
		return ledger.DeltaCommit{}, err
	}
	if res.CheckpointErr != nil {
		f.log.Warn("writing a delta checkpoint failed; the next one covers it", "table", name, "err", res.CheckpointErr)
	}
	return ledger.DeltaCommit{Sequence: seq, Version: res.Version}, nil
}
