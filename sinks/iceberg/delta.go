package iceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/delta"
)

// DeltaTables is what the sink asks of the node about a table's Delta Lake
// log: whether its mapping's formats name delta, and the last Delta commit
// the replicated state recorded for it. The node implements it over the
// worker's routes and its Raft node; the sink never imports the cluster.
type DeltaTables interface {
	WritesDelta(key string) bool
	DeltaRecorded(key string) (ledger.DeltaCommit, bool)
	// DeltaSettings are the table's Delta log settings (its mapping's).
	DeltaSettings(key string) DeltaSettings
}

// DeltaSettings tune one table's Delta log; zero values are the defaults
// (delta.DefaultCheckpointInterval, the sink's log retention).
type DeltaSettings struct {
	CheckpointInterval int64
	LogRetention       time.Duration
}

// ErrDeltaDiverged: the table's Delta log holds commits the replicated
// state does not know (or lacks ones it does), in a way the committer
// cannot repair by itself; the commit is refused until an operator looks.
var ErrDeltaDiverged = errors.New("delta log and replicated state disagree")

// deltaSide is the sink's Delta Lake writer: one open log per table, owned
// by the table's commit loop (every call below runs in it).
type deltaSide struct {
	tables DeltaTables
	props  map[string]string // warehouse IO properties, for s3:// roots
	opts   delta.Options
	// retention is how long log entries are kept for time travel
	// (delta.DefaultLogRetention; tests shorten it).
	retention time.Duration

	mu   sync.Mutex
	logs map[string]*delta.Log // by table key; opened (and synced) on first use
	// mirrored is, by dead-letter table key, the metadata location last
	// mirrored to its Delta log by this process (dlqdelta.go).
	mirrored map[string]string
	// level is, by table key, whether this process brought the table's
	// followers (its dead-letter table's log) level with its commits
	// (settle.go); absent: not known to be.
	level map[string]bool

	// published, when set, runs after a Delta version is published and
	// before the replicated entry that records it is proposed: tests fail
	// there to prove a crash between the two neither skips a version nor
	// publishes one twice.
	published func(key string, version int64) error
	// rearranging, when set, runs before a committed compaction is
	// published to the log: tests fail there to prove a crash between the
	// Iceberg commit and the Delta version only defers the version to the
	// next sync, still as an OPTIMIZE.
	rearranging func(key string) error
	// mirroring, when set, runs before a dead-letter table's log is
	// synced: tests fail there to prove a crash after the commit entry and
	// before the mirror only delays it.
	mirroring func(dlqKey string) error
}

// SetDelta makes the sink write a Delta Lake log beside Iceberg for every
// table t says writes one. Call it before the sink is used.
func (s *Sink) SetDelta(t DeltaTables, props map[string]string, opts delta.Options) {
	s.delta = &deltaSide{tables: t, props: props, opts: opts, retention: delta.DefaultLogRetention,
		logs: map[string]*delta.Log{}, mirrored: map[string]string{}, level: map[string]bool{}}
}

// writesDelta reports whether table key writes a Delta log.
func (s *Sink) writesDelta(key string) bool {
	return s.delta != nil && s.delta.tables.WritesDelta(key)
}

// forget drops a table's open log: the next commit re-reads its tail and
// syncs it with the Iceberg table. Called after any failure whose outcome
// is unknown and after a commit the log did not follow.
func (d *deltaSide) forget(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.logs, key)
}

// openDelta returns the table's log, opening it when this process has not yet:
// then the log's tail is read and, unless it holds the commit recorded
// next (published before a crash, adopted by the caller), its live files
// are made the Iceberg table's (delta.Log.Sync): the first version of a
// log added to an existing table, or the catch-up of one that missed
// changes while the commit loop was not following it.
func (s *Sink) openDelta(ctx context.Context, key string, tbl *table.Table, committer ledger.Assignment, at time.Time) (*delta.Log, error) {
	d := s.delta
	d.mu.Lock()
	l, ok := d.logs[key]
	d.mu.Unlock()
	interval := d.tables.DeltaSettings(key).CheckpointInterval
	if interval <= 0 {
		interval = d.opts.CheckpointInterval
	}
	if ok {
		l.SetCheckpointInterval(interval) // the mapping may have changed it since
		return l, nil
	}
	st, err := delta.OpenStore(ctx, tbl.Location(), d.props)
	if err != nil {
		return nil, err
	}
	opts := d.opts
	opts.CheckpointInterval = interval
	if l, err = delta.Open(ctx, st, opts); err != nil {
		return nil, err
	}
	dt := deltaTable(tbl, key)
	// A sync may remove files from the log: like a deletion it is fenced
	// (the state proved current, the role re-checked), so a committer cut
	// off cannot undo its successor's versions with its stale table.
	if _, err := s.fenceDeletion(ctx, key, committer); err != nil {
		return nil, err
	}
	rec, _ := d.tables.DeltaRecorded(key)
	// have < rec: the log lost versions (deleted or restored by hand); it
	// is synced, and a log that still names an older sequence is then
	// refused at publish (delta.ErrSequenceGap).
	if have, _ := l.Txn(dt.ID); have <= rec.Sequence && tbl.CurrentSnapshot() != nil {
		if err := syncLog(ctx, l, dt, tbl, at); err != nil {
			return nil, err
		}
	}
	d.mu.Lock()
	d.logs[key] = l
	d.mu.Unlock()
	return l, nil
}

// syncLog makes the log's live files the table's current snapshot's, with
// the snapshot's offsets and id in its commitInfo; when the table only
// compacted since the log's head, the version is an OPTIMIZE with
// dataChange false (deltasync.go).
func syncLog(ctx context.Context, l *delta.Log, dt delta.Table, tbl *table.Table, at time.Time) error {
	snap := tbl.CurrentSnapshot()
	offsets, err := Offsets(snap)
	if err != nil {
		return err
	}
	live, err := liveFiles(ctx, tbl)
	if err != nil {
		return err
	}
	head, err := l.Head(ctx)
	if err != nil {
		return err
	}
	c := delta.Commit{Table: dt, CommitID: fmt.Sprintf("%s%d", syncCommitPrefix, snap.SnapshotID), Offsets: offsets, At: at,
		Rearrange: rearrangedSince(tbl, head)}
	if dt.DeletionVectors {
		if c.Deletes, err = deletedRows(ctx, tbl); err != nil {
			return err
		}
	}
	if _, err := l.Sync(ctx, c, live); err != nil {
		return fmt.Errorf("adding the iceberg table's files to its delta log: %w", err)
	}
	return nil
}

// liveFiles lists the data files of the table's current snapshot.
func liveFiles(ctx context.Context, tbl *table.Table) ([]delta.File, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the live files: %w", err)
	}
	out := make([]delta.File, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, delta.File{FileDescriptor: describe(t.File)})
	}
	return out, nil
}

// deltaTable describes tbl for its Delta log: an upsert table's log
// carries its position deletes as deletion vectors.
func deltaTable(tbl *table.Table, key string) delta.Table {
	dt := delta.TableOf(tbl.Metadata(), ledger.DisplayName(key))
	_, dt.DeletionVectors = upsertOf(tbl)
	return dt
}

// deletedRows reads the rows the table's current position-delete files
// delete, by data file path: what a sync makes the files' DVs.
func deletedRows(ctx context.Context, tbl *table.Table) (map[string][]int64, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	dels, err := liveDeleteFiles(fs, tbl.CurrentSnapshot())
	if err != nil {
		return nil, err
	}
	deleted := map[string]map[int64]bool{}
	for _, d := range dels {
		if err := readPosDeletes(ctx, fs, d.FilePath(), deleted); err != nil {
			return nil, fmt.Errorf("reading the deleted rows for the delta log: %w", err)
		}
	}
	out := make(map[string][]int64, len(deleted))
	for path, rows := range deleted {
		out[path] = slices.Sorted(maps.Keys(rows))
	}
	return out, nil
}

// deltaCommit is what an append publishes to the Delta log.
type deltaCommit struct {
	key     string
	tbl     *table.Table
	entries []ledger.Entry
	g       gathered
	req     *ledger.CommitRequest
	at      time.Time
	// deletes are an upsert commit's position deletes, by data file.
	deletes []posDelete
}

// publishDelta publishes the append as the table's next Delta version
// before the replicated entry that commits it, and fills req.Delta so that
// entry records it. Its sequence is one past the recorded one. When the
// log already holds that sequence (published before a crash or a refused
// entry, by this committer or a stale one), the append becomes that commit:
// its entries, which must be the oldest pending, and its commit id; the
// returned entries are then those. Any failure leaves the log to be
// re-read and synced at the next attempt.
func (s *Sink) publishDelta(ctx context.Context, c deltaCommit) ([]ledger.Entry, gathered, error) {
	d := s.delta
	name := ledger.DisplayName(c.key)
	l, err := s.openDelta(ctx, c.key, c.tbl, c.req.Committer, c.at)
	if err != nil {
		return nil, c.g, fmt.Errorf("opening the delta log of %s: %w", name, err)
	}
	rec, _ := d.tables.DeltaRecorded(c.key)
	res, err := l.Publish(ctx, c.delta(rec.Sequence+1))
	if conflict, ok := errors.AsType[*delta.SequenceConflictError](err); ok {
		c.entries, c.g, err = adopt(c, conflict)
		if err == nil {
			s.log.Info("committing the delta version published before a crash or a refused entry",
				"table", name, "version", conflict.Version, "sequence", conflict.Sequence, "commit_id", conflict.CommitID)
			res, err = l.Publish(ctx, c.delta(rec.Sequence+1))
		}
	}
	if err != nil {
		d.forget(c.key)
		return nil, c.g, fmt.Errorf("publishing the delta version of %s: %w", name, err)
	}
	c.req.Delta = &ledger.DeltaCommit{Sequence: rec.Sequence + 1, Version: res.Version}
	if res.CheckpointErr != nil {
		s.log.Warn("writing a delta checkpoint failed; the next one covers it", "table", name, "err", res.CheckpointErr)
	}
	if d.published != nil {
		if err := d.published(c.key, res.Version); err != nil {
			d.forget(c.key)
			return nil, c.g, err
		}
	}
	return c.entries, c.g, nil
}

// delta is the Delta commit of the append as sequence seq.
func (c deltaCommit) delta(seq int64) delta.Commit {
	out := delta.Commit{Table: deltaTable(c.tbl, c.key), Sequence: seq,
		CommitID: c.req.CommitID, Offsets: c.g.offsets, Entries: c.g.ids, At: c.at}
	if len(c.deletes) > 0 {
		out.Deletes = map[string][]int64{}
		for _, d := range c.deletes {
			out.Deletes[d.path] = append(out.Deletes[d.path], d.pos)
		}
	}
	for _, e := range c.entries {
		for _, f := range e.Files {
			out.Add = append(out.Add, delta.File{FileDescriptor: f, WrittenAt: e.WrittenAt})
		}
	}
	return out
}

// adopt makes the append the commit the log already holds under its
// sequence: the same oldest pending entries (a prefix of c.entries) and
// commit id, with the same offsets. Anything else is ErrDeltaDiverged.
func adopt(c deltaCommit, conflict *delta.SequenceConflictError) ([]ledger.Entry, gathered, error) {
	n := len(conflict.Entries)
	ids := make([]string, 0, len(c.entries))
	for _, e := range c.entries {
		ids = append(ids, e.ID)
	}
	if conflict.CommitID == "" || n == 0 || n > len(ids) || !slices.Equal(ids[:n], conflict.Entries) {
		return nil, c.g, fmt.Errorf("%w: %v (its entries %v are not the oldest pending %v)", ErrDeltaDiverged, conflict, conflict.Entries, ids)
	}
	entries := c.entries[:n]
	g, err := gather(c.tbl, entries)
	if err != nil {
		return nil, c.g, err
	}
	if !maps.Equal(g.offsets, conflict.Offsets) {
		return nil, c.g, fmt.Errorf("%w: %v carries offsets %v, the entries give %v", ErrDeltaDiverged, conflict, conflict.Offsets, g.offsets)
	}
	c.req.CommitID = conflict.CommitID
	c.req.Entries = slices.Clone(conflict.Entries)
	return entries, g, nil
}

// deltaFiles names the data files and deletion vector files the table's
// Delta log references, live or removed but still in its tombstones
// (paths relative to the table root; orphan cleanup matches them by base
// name, unique per write), so that cleanup spares them while a Delta
// reader may still read them; nil for a sink without Delta.
func (s *Sink) deltaFiles(ctx context.Context, key string, tbl *table.Table) (map[string]bool, error) {
	if s.delta == nil || tbl == nil {
		return nil, nil
	}
	l, err := s.readDelta(ctx, key, tbl)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, p := range l.Referenced() {
		out[p] = true
	}
	return out, nil
}

// readDelta opens a table's Delta log apart from the commit loop's (which
// is not safe for concurrent use), for the background orphan cleanup.
func (s *Sink) readDelta(ctx context.Context, key string, tbl *table.Table) (*delta.Log, error) {
	st, err := delta.OpenStore(ctx, tbl.Location(), s.delta.props)
	if err != nil {
		return nil, err
	}
	l, err := delta.Open(ctx, st, s.delta.opts)
	if err != nil {
		return nil, fmt.Errorf("reading the delta log of %s: %w", ledger.DisplayName(key), err)
	}
	return l, nil
}

// cleanDeltaLog deletes the entries of the Delta log under tbl's root (the
// table key's, or its dead-letter table's) past key's retention (its
// delta.log_retention, by default delta.DefaultLogRetention, 30 days),
// keeping the checkpoint readers start from; it runs behind orphan
// cleanup's fence.
func (s *Sink) cleanDeltaLog(ctx context.Context, key string, tbl *table.Table) error {
	l, err := s.readDelta(ctx, key, tbl)
	if err != nil {
		return err
	}
	retention := s.delta.retention
	if r := s.delta.tables.DeltaSettings(key).LogRetention; r > 0 {
		retention = r
	}
	n, err := l.Cleanup(ctx, retention)
	if n > 0 {
		s.log.Info("deleted delta log entries past the retention", "table", ledger.DisplayName(key), "files", n)
	}
	return err
}

// rearrangeDelta publishes a committed compaction to the Delta log: its
// removes and adds with dataChange false, no txn (it moves no offsets).
// It runs after the Iceberg commit, so a compaction refused there never
// reaches the log; when the publish fails the log is synced at the next
// append, and orphan cleanup spares the files the log still references.
func (s *Sink) rearrangeDelta(ctx context.Context, key string, tbl *table.Table, rw *Rewrite, commitID string, at time.Time) error {
	name := ledger.DisplayName(key)
	s.delta.mu.Lock()
	l, ok := s.delta.logs[key]
	s.delta.mu.Unlock()
	if !ok {
		return nil // opening it syncs it with the compacted table
	}
	if s.delta.rearranging != nil {
		if err := s.delta.rearranging(key); err != nil {
			s.delta.forget(key)
			return err
		}
	}
	offsets, err := Offsets(tbl.CurrentSnapshot())
	if err != nil {
		return err
	}
	c := delta.Commit{Table: deltaTable(tbl, key), CommitID: commitID, Offsets: offsets, Rearrange: true, At: at}
	for _, g := range rw.Groups {
		for _, df := range g.OldDataFiles {
			c.Remove = append(c.Remove, delta.File{FileDescriptor: describe(df)})
		}
		for _, df := range g.NewDataFiles {
			c.Add = append(c.Add, delta.File{FileDescriptor: describe(df), WrittenAt: at.UnixMilli()})
		}
	}
	if _, err := l.Publish(ctx, c); err != nil {
		s.delta.forget(key)
		return fmt.Errorf("publishing the compaction of %s to its delta log: %w", name, err)
	}
	return nil
}

// resyncDelta re-reads the table's Delta log and makes its live files the
// committed table's (a commit that changed files without a Delta version
// of its own: a replace delete).
func (s *Sink) resyncDelta(ctx context.Context, key string, tbl *table.Table, committer ledger.Assignment, at time.Time) error {
	s.delta.forget(key)
	_, err := s.openDelta(ctx, key, tbl, committer, at)
	if err != nil {
		s.delta.forget(key)
	}
	return err
}
