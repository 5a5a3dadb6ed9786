package raftnode

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
)

// wireError is an FSM refusal sent back to the node that forwarded the
// command. Code names the sentinel it wraps so that errors.Is, ledger.Refused
// and IsRetryable answer on the forwarding node exactly as on the leader.
type wireError struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// wireSentinels lists every sentinel a command can be refused with: the
// FSM's recorded refusals (fsm.Refusals, the one table of their codes), then
// those of Raft, the version gate and this package. Codes are part of the
// wire format between versions: append only.
var wireSentinels = append(fsm.Refusals(), []fsm.Refusal{
	{Code: "not_leader", Err: ErrNotLeader},
	{Code: "leadership_lost", Err: raft.ErrLeadershipLost},
	{Code: "enqueue_timeout", Err: raft.ErrEnqueueTimeout},
	{Code: "raft_shutdown", Err: raft.ErrRaftShutdown},
	{Code: "not_member", Err: ErrNotMember},
	{Code: "upgrade_required", Err: fsm.ErrUpgradeRequired},
	{Code: "protocol_too_low", Err: fsm.ErrProtocolTooLow},
}...)

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Message: err.Error()}
	for _, s := range wireSentinels {
		// A bare iceberg-go sentinel crosses as its FSM twin's code.
		if errors.Is(err, s.Err) || errors.Is(err, icebergTwin(s.Err)) {
			w.Code = s.Code
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
	// An FSM sentinel also matches its iceberg-go twin (fsm.go), as the
	// leader's own error does.
	if twin := icebergTwin(e.sentinel); twin != nil {
		return []error{e.sentinel, twin}
	}
	return []error{e.sentinel}
}

func fromWire(w *wireError) error {
	if w == nil {
		return nil
	}
	for _, s := range wireSentinels {
		if s.Code == w.Code {
			return &remoteError{msg: w.Message, sentinel: s.Err}
		}
	}
	// A code this version does not know (a newer leader): keep the message.
	return fmt.Errorf("%s", w.Message)
}
