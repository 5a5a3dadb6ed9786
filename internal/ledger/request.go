package ledger

// CommitRequest is what a Floe commit does besides changing table metadata:
// which committer makes it and, for an append, which ledger entries it
// covers. A table-format sink hands it to the catalog of record, which binds
// it to the tables the commit changes and applies their pointer swaps and
// the ledger commit as one replicated entry, fenced by Committer: a request
// from a committer epoch that is no longer current is refused with
// ErrStaleCommitter.
//
// It is plain data (no context, no mutable staging): staging a dead-letter
// table's swap with its table's belongs to the catalog's bound session.
type CommitRequest struct {
	// Table is the table whose committer role fences the commit: the main
	// table, also when the commit changes its dead-letter table.
	Table     string
	Committer Assignment
	// Entries are the ledger entries the commit removes (oldest first);
	// none for a maintenance commit, which moves no offsets.
	Entries  []string
	CommitID string
	At       int64 // unix ms, stamped by the committer
	// RewindGen marks the commit as the replace delete of the table's
	// rewind of that generation; DeletedRows is how many rows it removed.
	RewindGen   uint64
	DeletedRows int64
	// Delta, on an append of a table that also writes a Delta Lake log,
	// is the Delta version published for this commit (before the entry is
	// proposed); the replicated entry records it with the offsets.
	Delta *DeltaCommit
}

// DeltaCommit is a commit's Delta Lake version: Sequence is the table's
// commit sequence (the txn version of the table's appId, one more than the
// last recorded) and Version the Delta log version that holds it.
type DeltaCommit struct {
	Sequence int64 `json:"sequence"`
	Version  int64 `json:"version"`
}
