package commit

import (
	"errors"

	"github.com/floe-io/floe/internal/ledger"
)

// Fencing: every sink call of the loop that changes the table (appends,
// the replace delete, schema changes, expiry, compaction) names the
// committer role the loop read for the round, and the sink commits under
// it; the replicated state refuses a role that is no longer current.

// fenced reports whether a commit error means this node's committer role
// is stale: the replicated state refused its epoch. That is not a failure:
// the loop stops committing until the state shows another assignment.
func (c *Committer) fenced(err error) bool {
	return errors.Is(err, ledger.ErrStaleCommitter)
}
