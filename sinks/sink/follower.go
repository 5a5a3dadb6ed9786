package sink

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ledger"
)

// A follower is a second table format written over the Iceberg table's own
// data files (Delta Lake's log, sinks/delta): it adds no data of its own,
// only a log that names the same files. The Iceberg sink declares what it
// asks of one (sinks/iceberg.Follower) and calls it at the points of a
// commit a second log must see; the types below are what passes between
// the two, so neither package imports the other.

// FollowedTable is one Iceberg table at one committed state, as a follower
// reads it. The Iceberg sink implements it per call.
type FollowedTable interface {
	// Key is the table's key (ledger.TableKey); a dead-letter table's own.
	Key() string
	// Table is the Iceberg table: its location, schemas, specs and
	// snapshot lineage.
	Table() *table.Table
	// Upsert reports whether the table deletes rows of its files (an
	// upsert table's position deletes).
	Upsert() bool
	// Offsets are the offsets the current snapshot holds (floe.offsets).
	Offsets() (map[string]int64, error)
	// LiveFiles are the data files of the current snapshot.
	LiveFiles(ctx context.Context) ([]ledger.FileDescriptor, error)
	// DeletedRows are the rows the current position-delete files delete,
	// by data file path, sorted (nil for a table without deletes).
	DeletedRows(ctx context.Context) (map[string][]int64, error)
	// RearrangedSince reports whether every snapshot after the one
	// commitID names is a compaction's: the table changed only by
	// rearranging its rows since. False when no retained snapshot
	// carries commitID.
	RearrangedSince(commitID string) bool
	// Fence proves the caller still the table's committer in a current
	// state, as before deleting files: a follower calls it before a
	// change that may remove files from its log.
	Fence(ctx context.Context) error
}

// DeadLetterLoader loads a table's dead-letter table as a follower reads
// it; nil, nil when it does not exist yet.
type DeadLetterLoader func(ctx context.Context) (FollowedTable, error)

// DLQIdent is the identifier of a table's dead-letter table: its name with
// _dlq appended, in the same namespace. Every format names it so.
func DLQIdent(ident []string) []string {
	out := slices.Clone(ident)
	out[len(out)-1] += "_dlq"
	return out
}

// FollowedFile is a data file a follower's version adds or removes, with
// when it was written (Unix milliseconds; 0 when unknown).
type FollowedFile struct {
	ledger.FileDescriptor
	WrittenAt int64
}

// FollowedAppend is an append the follower publishes as its next version,
// before the replicated entry that commits it.
type FollowedAppend struct {
	CommitID string           // the Iceberg snapshot's floe.commit-id
	Offsets  map[string]int64 // the offsets after the append
	Entries  []string         // the ledger entries it commits, oldest first
	Files    []FollowedFile
	// Deletes are an upsert append's deleted rows, by data file path.
	Deletes map[string][]int64
	At      time.Time
}

// FollowedRewrite is a committed compaction: files removed and added with
// no row changed.
type FollowedRewrite struct {
	CommitID       string
	Removed, Added []FollowedFile
	At             time.Time
}

// FollowerConflict is the error a follower's Publish returns when its log
// already holds the commit sequence the append would take: published
// before a crash or a refused entry. The Iceberg sink then makes its
// append that commit (the same oldest entries, commit id and offsets) and
// publishes again, which finds it there and writes nothing.
type FollowerConflict struct {
	Sequence int64
	Version  int64            // the follower's version holding it; -1 when unknown
	CommitID string           // empty when unknown
	Offsets  map[string]int64 // nil when unknown
	Entries  []string         // nil when unknown
}

func (e *FollowerConflict) Error() string {
	return fmt.Sprintf("commit sequence %d is already published by commit %q at version %d", e.Sequence, e.CommitID, e.Version)
}

// SyncCommitPrefix starts the commit id of a follower's version that makes
// its log level with a snapshot (a sync, not one append): the snapshot's
// id follows, so FollowedTable.RearrangedSince can find it.
const SyncCommitPrefix = "sync-"
