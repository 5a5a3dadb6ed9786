package raftnode

import (
	"errors"

	"github.com/apache/iceberg-go/table"
	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// Sentinels of the Raft node. The refusals of the state machine itself are
// in package fsm.
var (
	// ErrNotLeader: this node cannot apply commands; the caller should retry
	// on (or be forwarded to) the leader.
	ErrNotLeader = errors.New("not the raft leader")
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
	case ledger.Refused(err), errors.Is(err, fsm.ErrStaleCommitter), errors.Is(err, fsm.ErrUnsupported),
		errors.Is(err, fsm.ErrStaleRewind), errors.Is(err, fsm.ErrNoSuchMapping), errors.Is(err, fsm.ErrMappingExists):
		return false
	case errors.Is(err, ErrNotLeader), errors.Is(err, raft.ErrNotLeader),
		errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrEnqueueTimeout),
		errors.Is(err, raft.ErrRaftShutdown), errors.Is(err, table.ErrCommitFailed):
		return true
	}
	return false
}
