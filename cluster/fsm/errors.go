package fsm

import (
	"errors"
	"fmt"

	"github.com/floe-io/floe/internal/ledger"
)

// Sentinels of the replicated state. The other subpackages reference these
// values rather than declare their own, so errors.Is answers the same
// whichever package a caller names.
var (
	// ErrStaleCommitter: a table commit came from a committer epoch that is
	// no longer current. The value is the ledger's, so the worker tests it
	// without importing the cluster packages.
	ErrStaleCommitter = ledger.ErrStaleCommitter
	// ErrUnsupported: the catalog of record refuses an operation by design.
	// It lives here, not in package catalog, because the RPC layer maps it
	// over the wire and IsRetryable classifies it.
	ErrUnsupported = errors.New("operation not supported by the floe catalog")
	// ErrSnapshotVersion: a snapshot was written by a newer, incompatible
	// version of Floe.
	ErrSnapshotVersion = errors.New("unsupported snapshot version")
	// ErrUnknownNode: the command names a member the group does not know.
	ErrUnknownNode = errors.New("unknown node")
	// ErrNotEmpty: a recovered state can only be installed into a cluster
	// that holds no tables or sources yet.
	ErrNotEmpty = errors.New("cluster state is not empty")
	// ErrNoSuchMapping: the named mapping does not exist.
	ErrNoSuchMapping = errors.New("no such mapping")
	// ErrMappingExists: a mapping of that name exists with other content.
	ErrMappingExists = errors.New("mapping already exists")
	// ErrStaleRewind: a replace delete names a rewind that a newer rewind
	// superseded, or one already done.
	ErrStaleRewind = errors.New("stale rewind")
	// ErrUpgradeRequired: this node met a log entry of a type its build
	// does not know and that may not be skipped; it applies nothing more
	// until it is restarted on a newer build, or resumes from a leader's
	// state it can hold (see Halt, Resume).
	ErrUpgradeRequired = errors.New("upgrade required")
	// ErrLossySnapshot: a state another node served holds a field this
	// build does not have (DecodeLossless); a halted node does not resume
	// from it.
	ErrLossySnapshot = errors.New("the state holds values this build cannot keep")
	// ErrProtocolTooLow: a command was not proposed because a member's
	// build may not know it (see ProtocolError).
	ErrProtocolTooLow = errors.New("a member's protocol level is too low for the command")
	// ErrUnknownCommand: a proposer was asked for a command its build lacks.
	ErrUnknownCommand = errors.New("unknown command type")
)

// Refusals that callers know as iceberg-go's catalog and table sentinels.
// The FSM must not import iceberg-go (it stays pure and small), so it refuses
// with these, whose messages are iceberg-go's own; the Raft adapter
// (raftnode) pairs each with its iceberg-go twin before the refusal leaves
// the node, so errors.Is(err, catalog.ErrNoSuchTable) and
// errors.Is(err, table.ErrCommitFailed) answer as they always did.
var (
	ErrNoSuchTable            = errors.New("table does not exist")
	ErrTableAlreadyExists     = errors.New("table already exists")
	ErrNoSuchNamespace        = errors.New("namespace does not exist")
	ErrNamespaceAlreadyExists = errors.New("namespace already exists")
	ErrNamespaceNotEmpty      = errors.New("namespace is not empty")
	ErrCommitFailed           = errors.New("commit failed, refresh and try again")
)

// commitFailed marks a refused compare-and-swap the way iceberg-go expects
// (once paired with table.ErrCommitFailed): the caller refreshes the table
// and tries again.
func commitFailed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCommitFailed, fmt.Sprintf(format, args...))
}
