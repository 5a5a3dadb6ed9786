package cluster

import (
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/ledger"
)

// Sentinel errors of the cluster package.
var (
	// ErrNotLeader: this node cannot apply commands; the caller should retry
	// on (or be forwarded to) the leader.
	ErrNotLeader = errors.New("not the raft leader")
	// ErrStaleCommitter: a table commit came from a committer epoch that is
	// no longer current.
	ErrStaleCommitter = errors.New("stale committer epoch")
	// ErrUnsupported: the catalog of record refuses an operation by design.
	ErrUnsupported = errors.New("operation not supported by the floe catalog")
	// ErrSnapshotVersion: a snapshot was written by a newer, incompatible
	// version of Floe.
	ErrSnapshotVersion = errors.New("unsupported snapshot version")
	// ErrUnknownNode: the command names a member the group does not know.
	ErrUnknownNode = errors.New("unknown node")
	// ErrNotEmpty: a recovered state can only be installed into a cluster
	// that holds no tables or sources yet.
	ErrNotEmpty = errors.New("cluster state is not empty")
	// ErrRaftShutdownLocal: this node is shutting down.
	ErrRaftShutdownLocal = errors.New("this node is shutting down")
	// ErrNotMember: this node is not (yet) part of a Raft configuration.
	ErrNotMember = errors.New("not a member of the raft group")
)

// IsRetryable is the one classifier of cluster errors: true when the same
// operation may succeed if tried again later (leadership moved, Raft busy,
// a commit lost a race), false when it is refused for good (fenced epoch,
// invalid entry).
func IsRetryable(err error) bool {
	switch {
	case err == nil:
		return false
	case ledger.Refused(err), errors.Is(err, ErrStaleCommitter), errors.Is(err, ErrUnsupported),
		errors.Is(err, ErrStaleRewind), errors.Is(err, ErrNoSuchMapping), errors.Is(err, ErrMappingExists):
		return false
	case errors.Is(err, ErrNotLeader), errors.Is(err, raft.ErrNotLeader),
		errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrEnqueueTimeout),
		errors.Is(err, raft.ErrRaftShutdown), errors.Is(err, table.ErrCommitFailed):
		return true
	}
	return false
}

// commitFailed marks a refused compare-and-swap the way iceberg-go expects:
// the caller refreshes the table and tries again.
func commitFailed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", table.ErrCommitFailed, fmt.Sprintf(format, args...))
}

var _ catalog.Catalog = (*Catalog)(nil)
