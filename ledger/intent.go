package ledger

import "context"

// StagedSwap is a metadata pointer change written but not yet applied.
type StagedSwap struct {
	Table    string
	Expected string
	New      string
}

// CommitIntent carries what a Floe commit does besides changing table
// metadata: which ledger entries it covers and which committer makes it. A
// table-format sink attaches it to the context of its catalog commit; the
// catalog of record reads it and applies pointer swaps and the ledger commit
// as one replicated entry.
type CommitIntent struct {
	Table     string
	Entries   []string
	Committer *Assignment
	CommitID  string
	At        int64 // unix ms
	// Stage makes the catalog write the metadata and append the swap to
	// Staged instead of applying it; the next commit with this intent and
	// Stage false applies all staged swaps with its own, atomically. This
	// is how a table and its dead-letter table commit together.
	Stage  bool
	Staged []StagedSwap
	// RewindGen marks the commit as the replace delete of the table's
	// rewind of that generation; DeletedRows is how many rows it removed.
	RewindGen   uint64
	DeletedRows int64
}

type intentKey struct{}

// WithCommitIntent attaches an intent to ctx.
func WithCommitIntent(ctx context.Context, in *CommitIntent) context.Context {
	return context.WithValue(ctx, intentKey{}, in)
}

// IntentFrom returns the intent attached to ctx, or nil.
func IntentFrom(ctx context.Context) *CommitIntent {
	in, _ := ctx.Value(intentKey{}).(*CommitIntent)
	return in
}
