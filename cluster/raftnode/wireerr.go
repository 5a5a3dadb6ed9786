package raftnode

import (
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/ledger"
)

// wireError is an FSM refusal sent back to the node that forwarded the
// command. Code names the sentinel it wraps so that errors.Is, ledger.Refused
// and IsRetryable answer on the forwarding node exactly as on the leader.
type wireError struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// wireSentinels lists every sentinel a command can be refused with. Codes
// are part of the wire format between versions: append only.
var wireSentinels = []struct {
	code string
	err  error
}{
	{"not_leader", ErrNotLeader},
	{"stale_committer", fsm.ErrStaleCommitter},
	{"unsupported", fsm.ErrUnsupported},
	{"unknown_node", fsm.ErrUnknownNode},
	{"not_empty", fsm.ErrNotEmpty},
	{"commit_failed", table.ErrCommitFailed},
	{"stale_epoch", ledger.ErrStaleEpoch},
	{"gap", ledger.ErrGap},
	{"overlap", ledger.ErrOverlap},
	{"not_assigned", ledger.ErrNotAssigned},
	{"invalid_entry", ledger.ErrInvalidEntry},
	{"unknown_entry", ledger.ErrUnknownEntry},
	{"not_oldest", ledger.ErrNotOldest},
	{"no_such_table", catalog.ErrNoSuchTable},
	{"table_exists", catalog.ErrTableAlreadyExists},
	{"no_such_namespace", catalog.ErrNoSuchNamespace},
	{"namespace_exists", catalog.ErrNamespaceAlreadyExists},
	{"namespace_not_empty", catalog.ErrNamespaceNotEmpty},
	{"leadership_lost", raft.ErrLeadershipLost},
	{"enqueue_timeout", raft.ErrEnqueueTimeout},
	{"raft_shutdown", raft.ErrRaftShutdown},
	{"not_member", ErrNotMember},
	{"no_such_mapping", fsm.ErrNoSuchMapping},
	{"mapping_exists", fsm.ErrMappingExists},
	{"stale_rewind", fsm.ErrStaleRewind},
	{"upgrade_required", fsm.ErrUpgradeRequired},
	{"protocol_too_low", fsm.ErrProtocolTooLow},
}

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Message: err.Error()}
	for _, s := range wireSentinels {
		if errors.Is(err, s.err) {
			w.Code = s.code
			break
		}
	}
	return w
}

// remoteError is a refusal decoded on the forwarding node.
type remoteError struct {
	msg      string
	sentinel error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() []error {
	// An iceberg-go sentinel also matches the FSM's twin (fsm.go), as the
	// leader's own error does.
	for _, t := range icebergTwins {
		if t.iceberg == e.sentinel {
			return []error{e.sentinel, t.fsm}
		}
	}
	return []error{e.sentinel}
}

func fromWire(w *wireError) error {
	if w == nil {
		return nil
	}
	for _, s := range wireSentinels {
		if s.code == w.Code {
			return &remoteError{msg: w.Message, sentinel: s.err}
		}
	}
	// A code this version does not know (a newer leader): keep the message.
	return fmt.Errorf("%s", w.Message)
}
