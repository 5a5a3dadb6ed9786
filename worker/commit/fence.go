package commit

import (
	"context"
	"errors"
	"time"

	"github.com/floe-io/floe/ledger"
)

// fenceCtx attaches to ctx the intent that fences a maintenance commit
// (snapshot expiry, compaction, orphan cleanup) by the committer role the
// commit loop read for this iteration, so a node that lost the role cannot
// change the table behind its new committer's back: the catalog of record
// refuses a commit from a stale epoch. The intent names no entries, so it
// moves no offsets. Table is the main table even when the sink commits the
// dead-letter table, because the role is the main table's. Each call makes
// a fresh intent: a sink may append staged swaps to it.
func fenceCtx(ctx context.Context, table string, a ledger.Assignment) context.Context {
	return ledger.WithCommitIntent(ctx, &ledger.CommitIntent{Table: table, Committer: &a, At: time.Now().UnixMilli()})
}

// fenced reports whether a commit error means this node's committer role
// is stale: the replicated state refused its epoch. That is not a failure:
// the loop stops committing until the state shows another assignment.
func (c *Committer) fenced(err error) bool {
	return errors.Is(err, ledger.ErrStaleCommitter)
}
