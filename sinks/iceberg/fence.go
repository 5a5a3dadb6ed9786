package iceberg

import (
	"context"
	"errors"
	"fmt"

	"github.com/floe-io/floe/internal/ledger"
)

// Fence is what the sink asks of the replicated state before it deletes
// files of a table, and before maintenance reads a table's metadata. The
// node implements it over its Raft node (cmd/floe/node/replica.go); the sink never
// imports the cluster.
type Fence interface {
	// Barrier returns once this node's state holds every entry the group
	// had committed when Barrier was called (a linearizable read). An
	// error means that could not be proved: the node is cut off from the
	// majority, no leader answers, or ctx ended.
	Barrier(ctx context.Context) error
	// Committer returns the holder of a table's committer role in this
	// node's state.
	Committer(key string) (ledger.Assignment, bool)
	// PendingFiles names every file (data and dead-letter) that a pending
	// ledger entry of the table names, in this node's state.
	PendingFiles(key string) []string
}

// ErrUnfenced: a deletion of table files could not be fenced, because the
// sink has no Fence or the read barrier failed. Nothing was deleted; the
// next run tries again. (A barrier that passed but shows the committer role
// moved is ledger.ErrStaleCommitter instead.)
var ErrUnfenced = errors.New("deleting table files needs a fence that proves this node's state current")

// SetFence gives the sink its fence. Call it before the sink is used;
// without one, orphan cleanup deletes nothing and maintenance reads
// metadata without waiting for the log.
func (s *Sink) SetFence(f Fence) { s.fence = f }

// caughtUp waits until this node has applied the log before maintenance of
// table key reads its metadata: a node catching up (after a restart or a
// partition) would otherwise follow a stale pointer to a metadata file
// that later commits already deleted.
func (s *Sink) caughtUp(ctx context.Context, key string) error {
	if s.fence == nil {
		return nil
	}
	if err := s.fence.Barrier(ctx); err != nil {
		return fmt.Errorf("waiting until this node applied the log before reading metadata of %s: %w", ledger.DisplayName(key), err)
	}
	return nil
}

// fenceDeletion is the fence just before deleting files of table key as
// committer: a read barrier, then the role re-checked in the now-current
// state. It returns the files that the now-current ledger's pending
// entries name, which must be spared too.
func (s *Sink) fenceDeletion(ctx context.Context, key string, committer ledger.Assignment) (map[string]bool, error) {
	if s.fence == nil {
		return nil, fmt.Errorf("%w: no fence is wired", ErrUnfenced)
	}
	if err := s.fence.Barrier(ctx); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnfenced, err)
	}
	if cur, ok := s.fence.Committer(key); !ok || cur != committer {
		return nil, fmt.Errorf("%w: deleting files of %s as %s epoch %d, but the committer is now %s epoch %d",
			ledger.ErrStaleCommitter, ledger.DisplayName(key), committer.Node, committer.Epoch, cur.Node, cur.Epoch)
	}
	pending := map[string]bool{}
	for _, p := range s.fence.PendingFiles(key) {
		pending[p] = true
	}
	return pending, nil
}
