package iceberg

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	upsertsink "github.com/floe-io/floe/sinks/iceberg/upsert"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

// Follower is a table format that follows the Iceberg table's commits over
// the same data files: Delta Lake's log (sinks/delta's Follower). The sink
// calls it where a second log must see a commit, and it never reaches into
// the sink: what it reads of a table comes through sink.FollowedTable.
type Follower interface {
	// Follows reports whether table key writes the follower's log (its
	// mapping's formats name it).
	Follows(key string) bool
	// Publish writes an append as t's next version before the replicated
	// entry that commits it, and returns what that entry records. A
	// *sink.FollowerConflict says the log already holds that sequence.
	Publish(ctx context.Context, t sink.FollowedTable, a sink.FollowedAppend) (ledger.DeltaCommit, error)
	// Rearrange publishes a committed compaction (nothing when the log is
	// not open in this process: opening it syncs it).
	Rearrange(ctx context.Context, t sink.FollowedTable, r sink.FollowedRewrite) error
	// Resync re-reads t's log and makes its live files the table's: after
	// a commit with no version of its own (a replace delete).
	Resync(ctx context.Context, t sink.FollowedTable, at time.Time) error
	// Forget drops what this process knows of key's log; its next use
	// re-reads the tail and syncs it.
	Forget(key string)
	// Referenced names the files t's log references, live or still in its
	// tombstones (paths relative to the table root): orphan cleanup spares
	// them.
	Referenced(ctx context.Context, t sink.FollowedTable) (map[string]bool, error)
	// CleanLog deletes t's log entries past table key's retention. It
	// runs behind orphan cleanup's fence.
	CleanLog(ctx context.Context, key string, t sink.FollowedTable) error
	// MirrorDeadLetters brings the log of key's dead-letter table level
	// with that table's committed state after a commit; dlq loads it (nil
	// when it does not exist yet).
	MirrorDeadLetters(ctx context.Context, key string, dlq sink.DeadLetterLoader, at time.Time) error
	// Settle does the same once per round until the mirror is known level.
	Settle(ctx context.Context, key string, dlq sink.DeadLetterLoader, at time.Time) error
	// DeadLetterVersion is the version of key's dead-letter log this
	// process last mirrored.
	DeadLetterVersion(key string) (int64, bool)
}

// SetFollower makes the sink keep f's log beside Iceberg for every table f
// follows. Call it before the sink is used.
func (s *Sink) SetFollower(f Follower) { s.follower = f }

// follows reports whether table key writes a follower's log.
func (s *Sink) follows(key string) bool {
	return s.follower != nil && s.follower.Follows(key)
}

// followed is a table as a follower reads it; fenceKey and committer fence
// its changes (a dead-letter table's are its table's).
type followed struct {
	s         *Sink
	key       string
	tbl       *table.Table
	fenceKey  string
	committer ledger.Assignment
}

func (s *Sink) followedTable(key string, tbl *table.Table, committer ledger.Assignment) followed {
	return followed{s: s, key: key, tbl: tbl, fenceKey: key, committer: committer}
}

func (f followed) Key() string         { return f.key }
func (f followed) Table() *table.Table { return f.tbl }

func (f followed) Upsert() bool {
	_, ok := upsertsink.Of(f.tbl)
	return ok
}

func (f followed) Offsets() (map[string]int64, error) { return Offsets(f.tbl.CurrentSnapshot()) }

func (f followed) Fence(ctx context.Context) error {
	_, err := f.s.fenceDeletion(ctx, f.fenceKey, f.committer)
	return err
}

// LiveFiles lists the data files of the table's current snapshot.
func (f followed) LiveFiles(ctx context.Context) ([]ledger.FileDescriptor, error) {
	if f.tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	tasks, err := f.tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the live files: %w", err)
	}
	out := make([]ledger.FileDescriptor, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, describe(t.File))
	}
	return out, nil
}

// DeletedRows reads the rows the table's current position-delete files
// delete, by data file path.
func (f followed) DeletedRows(ctx context.Context) (map[string][]int64, error) {
	if !f.Upsert() || f.tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	fs, err := f.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	dels, err := upsertsink.LiveDeleteFiles(fs, f.tbl.CurrentSnapshot())
	if err != nil {
		return nil, err
	}
	deleted := map[string]map[int64]bool{}
	for _, d := range dels {
		if err := upsertsink.ReadDeletes(ctx, fs, d.FilePath(), deleted); err != nil {
			return nil, fmt.Errorf("reading the deleted rows: %w", err)
		}
	}
	out := make(map[string][]int64, len(deleted))
	for path, rows := range deleted {
		out[path] = slices.Sorted(maps.Keys(rows))
	}
	return out, nil
}

// opCompaction is the floe.operation of a compaction's snapshot: rows
// moved between files, none added or removed (an upsert table's deleted
// rows purged with their delete files are not rows of the table).
const opCompaction = "compaction"

// RearrangedSince walks the current lineage back to the snapshot commitID
// names: every snapshot on the way must be a compaction's. A sync that
// catches a log up is then an OPTIMIZE, not new data for a streaming
// reader to read again. An unknown id, one no retained snapshot carries
// (expired, or a log restored by hand) or any other snapshot on the way
// is a data change: a reader re-reading rows is recoverable, one missing
// rows is not.
func (f followed) RearrangedSince(commitID string) bool {
	if commitID == "" {
		return false
	}
	meta := f.tbl.Metadata()
	steps := 0
	for snap := f.tbl.CurrentSnapshot(); snap != nil; steps++ {
		if carries(snap, commitID) {
			return steps > 0
		}
		if snap.Summary == nil || snap.Summary.Properties["floe.operation"] != opCompaction || snap.ParentSnapshotID == nil {
			return false
		}
		snap = meta.SnapshotByID(*snap.ParentSnapshotID)
	}
	return false
}

// carries reports whether snapshot snap is the one a follower's commit id
// names: an append's or a compaction's floe.commit-id, or a sync's
// sink.SyncCommitPrefix and the snapshot id.
func carries(snap *table.Snapshot, commitID string) bool {
	if id, ok := strings.CutPrefix(commitID, sink.SyncCommitPrefix); ok {
		return id == strconv.FormatInt(snap.SnapshotID, 10)
	}
	return snap.Summary != nil && snap.Summary.Properties[PropCommitID] == commitID
}
