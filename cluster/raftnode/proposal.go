package raftnode

import (
	"crypto/rand"
	"fmt"

	"github.com/floe-io/floe/cluster/fsm"
)

// encode frames a command for Raft, after the version gate: the command is
// refused (fsm.ProtocolError, naming the lagging members) while a registered
// member's protocol level is below the one that introduced it, and it is
// framed for the group's minimum level (fsm.EncodeFor): the ignorable bit
// from fsm.ProtocolGating on, and a proposal id, drawn here once per
// proposal and kept by every resend of the same bytes, from
// fsm.ProtocolProposalIDs on. A member of a build before ids would apply a
// resend that the others answer from their window, so until the last one
// is gone proposals go without an id and apply as before.
//
// A halted node (fsm.Halt) proposes nothing: its state stopped at an entry
// it cannot apply, so what it would propose is decided on a stale view.
func (n *Node) encode(c fsm.Command) ([]byte, error) {
	if h, halted := n.fsm.Halted(); halted {
		return nil, fmt.Errorf("proposing %s: %w", c.Type(), h)
	}
	// Until this node's own record is applied here its view of the
	// membership may be behind (it just joined): it proposes as the oldest
	// supported build would, its RegisterNode first.
	self := fsm.ProtocolLevel
	if !n.Registered() {
		self = fsm.ProtocolBase
	}
	level, err := n.fsm.GateCommand(c, self)
	if err != nil && self != fsm.ProtocolLevel {
		return nil, fmt.Errorf("%w (this node's own registration is not applied here yet)", err)
	}
	if err != nil {
		return nil, err
	}
	id := ""
	if level >= fsm.ProtocolProposalIDs {
		id = newProposalID()
	}
	return fsm.EncodeFor(level, id, c)
}

// newProposalID draws a proposal id: 128 random bits (crypto/rand.Text), so
// ids never repeat across nodes or restarts. The FSM never draws one.
func newProposalID() string { return rand.Text() }
