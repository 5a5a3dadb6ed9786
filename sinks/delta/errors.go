package delta

import (
	"errors"
	"fmt"
)

// Sentinel errors; each is wrapped with the table and version it concerns.
var (
	// ErrVersionExists: the version's commit file already exists; another
	// writer (or this one, before a crash) published it first.
	ErrVersionExists = errors.New("delta log version already exists")
	// ErrSequenceBehind: the log already holds a later commit sequence than
	// the one being published (a stale committer).
	ErrSequenceBehind = errors.New("commit sequence is behind the delta log")
	// ErrSequenceGap: the sequence being published is more than one past the
	// log's: a commit is missing from the Delta log.
	ErrSequenceGap = errors.New("commit sequence gap in the delta log")
	// ErrCorruptLog: the log cannot be read (a malformed action, a missing
	// version, a file past its size limit).
	ErrCorruptLog = errors.New("corrupt delta log")
	// ErrUnsupported: the table uses something this writer cannot express in
	// Delta (a column type, a partition, a type change): see docs/formats.md.
	ErrUnsupported = errors.New("not expressible in delta")
	// ErrInvalidCommit: the commit itself is malformed (no table id, a file
	// outside the table, an unknown partition spec).
	ErrInvalidCommit = errors.New("invalid delta commit")
)

// SequenceConflictError: the log already holds the commit sequence, but
// published by another commit (another commit id). The caller must adopt
// what the log holds (its offsets) rather than publish its own.
type SequenceConflictError struct {
	Sequence int64
	Version  int64            // the Delta version holding the sequence; -1 when unknown
	CommitID string           // the commit id the log holds; empty when unknown
	Offsets  map[string]int64 // the offsets that version carries; nil when unknown
	Entries  []string         // the ledger entries that version commits; nil when unknown
}

func (e *SequenceConflictError) Error() string {
	return fmt.Sprintf("commit sequence %d is already published by commit %q at delta version %d", e.Sequence, e.CommitID, e.Version)
}
