package delta

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// Options tune a Log; the zero value is the default.
type Options struct {
	// CheckpointInterval is the number of versions between checkpoints
	// (default DefaultCheckpointInterval, 10).
	CheckpointInterval int64
	// EngineInfo names the writer in commitInfo (default "floe").
	EngineInfo string
	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
	// InlineDVs writes deletion vectors inline in the log (storageType
	// 'i', as Floe did before) instead of in a DV file per version ('u',
	// the default): fewer files, but Trino reads no inline DVs.
	InlineDVs bool
}

// Log is one Delta table's transaction log as its single writer (the
// table's committer) sees it. It is not safe for concurrent use: one
// commit loop owns it.
type Log struct {
	st   Store
	opts Options
	snap *snapshot // the latest version this writer knows; nil: read the tail first
}

// Open reads the log's tail and returns the table's log. A table without a
// log yet is at version -1: the first Publish writes version 0.
func Open(ctx context.Context, st Store, opts Options) (*Log, error) {
	if opts.CheckpointInterval <= 0 {
		opts.CheckpointInterval = DefaultCheckpointInterval
	}
	if opts.EngineInfo == "" {
		opts.EngineInfo = "floe"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	l := &Log{st: st, opts: opts}
	if err := l.refresh(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Log) refresh(ctx context.Context) error {
	snap, err := readTail(ctx, l.st)
	if err != nil {
		l.snap = nil
		return fmt.Errorf("reading the delta log: %w", err)
	}
	l.snap = snap
	return nil
}

func (l *Log) ensure(ctx context.Context) error {
	if l.snap != nil {
		return nil
	}
	return l.refresh(ctx)
}

// SetCheckpointInterval changes the number of versions between checkpoints
// (the table's delta.checkpoint_interval; n <= 0: the default) of an open
// log; the next published version's metaData carries it as the table
// property delta.checkpointInterval.
func (l *Log) SetCheckpointInterval(n int64) {
	if n <= 0 {
		n = DefaultCheckpointInterval
	}
	l.opts.CheckpointInterval = n
}

// CheckpointInterval is the number of versions between checkpoints.
func (l *Log) CheckpointInterval() int64 { return l.opts.CheckpointInterval }

// Version is the latest version known (-1 for a table without a log).
func (l *Log) Version() int64 {
	if l.snap == nil {
		return -1
	}
	return l.snap.version
}

// Txn is the latest txn version of app (the last commit sequence that app
// published), and whether it has one.
func (l *Log) Txn(app string) (int64, bool) {
	if l.snap == nil {
		return 0, false
	}
	v, ok := l.snap.txns[app]
	return v, ok
}

// Files lists the paths (relative to the table root) of the live files.
func (l *Log) Files() []string {
	if l.snap == nil {
		return nil
	}
	return sortedKeys(l.snap.files)
}

// Commit is one Delta version to publish.
type Commit struct {
	// Table is the table as of this commit: a schema that differs from the
	// log's becomes a metaData action (schema evolution).
	Table Table
	// Sequence is the commit sequence, recorded as the txn version of
	// appId Table.ID. Zero for commits that move no offsets (compaction,
	// schema changes): they carry no txn.
	Sequence int64
	// CommitID identifies the commit (floe.commit-id) and Offsets are the
	// offsets the table holds after it (floe.offsets).
	CommitID string
	Offsets  map[string]int64
	// Entries are the ledger entries the commit records (floe.entries).
	Entries []string
	// Add and Remove are the data files entering and leaving the table.
	Add    []File
	Remove []File
	// Deletes are rows of data files that leave the table (an upsert
	// table's replaced and deleted rows: its position deletes), by the
	// file's path as in Add. A file of Add gets them as its DV; a live
	// file is removed with its DV and added again with the union of that
	// DV and these rows. Only for a Table with DeletionVectors.
	Deletes map[string][]int64
	// Rearrange marks a commit that moves rows without changing them
	// (compaction): its adds and removes carry dataChange false, and each
	// removed file must be live.
	Rearrange bool
	// At is the commit's time (default the Log's clock).
	At time.Time
}

// Result says what Publish did.
type Result struct {
	Version int64
	// Published is false when the log already held the commit (the same
	// sequence and commit id): nothing was written.
	Published bool
	// CheckpointErr is a failed checkpoint after a published version: the
	// version stands, the next checkpoint covers it.
	CheckpointErr error
}

// Publish writes the commit as the log's next version with put-if-absent.
// A commit whose sequence the log already holds under the same commit id is
// not written again (Result.Published false, with the version that holds
// it); under another commit id it is a *SequenceConflictError. A sequence
// below the log's is ErrSequenceBehind, one more than one past it
// ErrSequenceGap. When another writer took the version first the error is
// ErrVersionExists and the Log has re-read the tail, so a retry is checked
// against what that writer published. Any other write error leaves the
// outcome unknown: the Log re-reads the tail before the next commit.
func (l *Log) Publish(ctx context.Context, c Commit) (Result, error) {
	if err := l.prepare(ctx, &c); err != nil {
		return Result{}, err
	}
	if c.Sequence > 0 {
		if res, done, err := l.published(ctx, c); done || err != nil {
			return res, err
		}
	}
	v := l.snap.version + 1
	actions, err := l.actions(c, v)
	if err != nil {
		return Result{}, fmt.Errorf("delta version %d of %s: %w", v, c.Table.Name, err)
	}
	return l.write(ctx, c, v, actions)
}

// write publishes actions as version v with put-if-absent and checkpoints
// when one is due.
func (l *Log) write(ctx context.Context, c Commit, v int64, actions []Action) (Result, error) {
	if err := l.storeDVs(ctx, actions); err != nil {
		return Result{}, fmt.Errorf("delta version %d of %s: %w", v, c.Table.Name, err)
	}
	data, err := encodeActions(actions)
	if err != nil {
		return Result{}, fmt.Errorf("delta version %d of %s: %w", v, c.Table.Name, err)
	}
	if err := l.st.PutIfAbsent(ctx, commitName(v), data); err != nil {
		if errors.Is(err, ErrVersionExists) {
			if rerr := l.refresh(ctx); rerr != nil {
				return Result{}, errors.Join(fmt.Errorf("delta version %d of %s: %w", v, c.Table.Name, err), rerr)
			}
		} else {
			l.snap = nil // the write may have happened: learn it from the log
		}
		return Result{}, fmt.Errorf("delta version %d of %s: %w", v, c.Table.Name, err)
	}
	l.snap.apply(v, actions)
	res := Result{Version: v, Published: true}
	if v > 0 && v%l.opts.CheckpointInterval == 0 {
		res.CheckpointErr = writeCheckpoint(ctx, l.st, l.snap, c.At)
	}
	return res, nil
}

// published checks the commit's sequence against the log's txn for the
// table: done when the log already holds this very commit.
func (l *Log) published(ctx context.Context, c Commit) (Result, bool, error) {
	app := c.Table.ID
	have, ok := l.snap.txns[app]
	switch {
	case !ok:
		return Result{}, false, nil
	case have < c.Sequence-1:
		return Result{}, false, fmt.Errorf("%w: table %s publishes sequence %d, the log holds %d", ErrSequenceGap, c.Table.Name, c.Sequence, have)
	case have < c.Sequence:
		return Result{}, false, nil
	case have > c.Sequence:
		return Result{}, false, fmt.Errorf("%w: table %s publishes sequence %d, the log holds %d", ErrSequenceBehind, c.Table.Name, c.Sequence, have)
	}
	v, info := txnCommit(ctx, l.st, l.snap, app)
	if info != nil && info.CommitID != "" && info.CommitID == c.CommitID {
		return Result{Version: v}, true, nil
	}
	conflict := &SequenceConflictError{Sequence: c.Sequence, Version: v}
	if info != nil {
		conflict.CommitID, conflict.Offsets, conflict.Entries = info.CommitID, maps.Clone(info.Offsets), slices.Clone(info.Entries)
	}
	return Result{}, true, fmt.Errorf("table %s: %w", c.Table.Name, conflict)
}

// actions builds the version's actions: commitInfo first, then protocol
// and metaData when they change, txn, removes and adds.
func (l *Log) actions(c Commit, v int64) ([]Action, error) {
	at := c.At.UnixMilli()
	out := []Action{{CommitInfo: l.commitInfo(c, v, at)}}
	meta, proto, err := l.metadata(c.Table, at)
	if err != nil {
		return nil, err
	}
	if proto != nil {
		out = append(out, Action{Protocol: proto})
	}
	if meta != nil {
		out = append(out, Action{MetaData: meta})
	} else {
		meta = l.snap.metadata
	}
	if c.Sequence > 0 {
		out = append(out, Action{Txn: &Txn{AppID: c.Table.ID, Version: c.Sequence, LastUpdated: &at}})
	}
	files, err := l.fileActions(c, meta.PartitionColumns, at)
	if err != nil {
		return nil, err
	}
	return append(out, files...), nil
}

func (l *Log) commitInfo(c Commit, v, at int64) *CommitInfo {
	info := &CommitInfo{Timestamp: at, EngineInfo: l.opts.EngineInfo, Offsets: c.Offsets, CommitID: c.CommitID, Entries: c.Entries}
	blind := len(c.Remove) == 0 && len(c.Deletes) == 0 // deletes remove logical files too
	info.Operation = operation(c, v)
	if !c.Rearrange && len(c.Add) > 0 {
		info.IsBlindAppend = &blind
	}
	if c.Sequence > 0 {
		info.OperationParameters = map[string]string{"outputMode": "Append", "queryId": c.Table.ID,
			"epochId": strconv.FormatInt(c.Sequence, 10)}
	}
	return info
}

// operation names a version in the history (DESCRIBE HISTORY) with the
// names Delta's own writers use.
func operation(c Commit, v int64) string {
	switch {
	case v == 0:
		return "CREATE TABLE"
	case c.Rearrange:
		return "OPTIMIZE"
	case len(c.Remove) > 0:
		return "DELETE"
	case c.Sequence > 0:
		return "STREAMING UPDATE"
	case len(c.Add) > 0:
		return "WRITE"
	}
	return "ADD COLUMNS"
}

// Referenced lists the paths (relative to the table root) of the files the
// log still references: the live ones and the removed ones its tombstones
// keep (until log cleanup drops them), which a reader of an older version
// may read, and the DV files of both.
func (l *Log) Referenced() []string {
	if l.snap == nil {
		return nil
	}
	seen := map[string]bool{}
	add := func(p string, d *DeletionVector) {
		seen[p] = true
		if f, err := DVFile(d); err == nil {
			seen[f] = true
		}
	}
	for p, a := range l.snap.files {
		add(p, a.DeletionVector)
	}
	for _, r := range l.snap.removed {
		add(r.Path, r.DeletionVector)
	}
	return sortedKeys(seen)
}

// prepare checks that c names its table, stamps its time when unset and
// makes sure the log's tail has been read: what Publish and Sync need
// before they decide anything.
func (l *Log) prepare(ctx context.Context, c *Commit) error {
	if c.Table.ID == "" || c.Table.Schema == nil {
		return fmt.Errorf("%w: table %s without id or schema", ErrInvalidCommit, c.Table.Name)
	}
	if c.At.IsZero() {
		c.At = l.opts.Now()
	}
	if err := l.ensure(ctx); err != nil {
		return err
	}
	return l.loadDVs(ctx, *c)
}
