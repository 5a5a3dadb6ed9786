package worker

import (
	"context"
	"fmt"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/worker/commit"
)

// ErrUnknownTable: no mapping routes into the table.
var ErrUnknownTable = commit.ErrUnknownTable

// ErrNotCommitter: the table's committer role is held by another node.
var ErrNotCommitter = commit.ErrNotCommitter

// ErrCompactionDisabled: maintenance on demand of a table whose mapping
// disables compaction, without force.
var ErrCompactionDisabled = commit.ErrCompactionDisabled

// Maintain runs a table's maintenance now (expiry, orphan cleanup and a
// compaction that ignores the hot-table bound and the window), in its
// commit loop so it serializes with appends, and reports what it did. A
// table whose mapping disables compaction is refused unless force.
func (w *Worker) Maintain(ctx context.Context, table string, force bool) (commit.MaintenanceResult, error) {
	w.mu.Lock()
	_, known := w.commits[table]
	w.mu.Unlock()
	if !known {
		return commit.MaintenanceResult{}, fmt.Errorf("table %s: %w", ledger.DisplayName(table), ErrUnknownTable)
	}
	return w.committer.Maintain(ctx, table, force)
}
