package ledger

import "errors"

// Sentinel errors. Each is wrapped with the partition or entry it concerns.
var (
	// ErrStaleEpoch: the entry comes from an assignment epoch that is no
	// longer current for a partition (a paused or partitioned writer).
	ErrStaleEpoch = errors.New("stale assignment epoch")
	// ErrGap: the entry starts after the ledger's end for a partition.
	ErrGap = errors.New("offset gap")
	// ErrOverlap: the entry starts before the ledger's end for a partition.
	ErrOverlap = errors.New("offset overlap")
	// ErrNotAssigned: nobody holds the partition.
	ErrNotAssigned = errors.New("partition not assigned")
	// ErrInvalidEntry: the entry is malformed (empty range, duplicate id...).
	ErrInvalidEntry = errors.New("invalid ledger entry")
	// ErrNotOldest: a commit tried to remove entries that are not a prefix of
	// the table's pending entries for some partition.
	ErrNotOldest = errors.New("commit does not cover the oldest pending entries")
	// ErrUnknownEntry: a commit names an entry the ledger does not hold.
	ErrUnknownEntry = errors.New("unknown ledger entry")
	// ErrStaleCommitter: a table commit came from a committer epoch that is
	// no longer current. The replicated state refuses with it (it is
	// cluster/fsm's ErrStaleCommitter, and crosses the internal RPC wire as
	// such); it lives here so that the worker, which must not import the
	// cluster packages, can test errors.Is directly. Not Refused: it fences
	// the committer, not an entry.
	ErrStaleCommitter = errors.New("stale committer epoch")
)

// Refused reports whether err is the ledger refusing an entry or commit for
// good: retrying the same proposal can never succeed, the writer must resume
// from the ledger's current state instead.
func Refused(err error) bool {
	return errors.Is(err, ErrStaleEpoch) || errors.Is(err, ErrGap) || errors.Is(err, ErrOverlap) ||
		errors.Is(err, ErrNotAssigned) || errors.Is(err, ErrInvalidEntry) ||
		errors.Is(err, ErrNotOldest) || errors.Is(err, ErrUnknownEntry)
}
