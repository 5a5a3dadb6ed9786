package raftnode

import (
	"crypto/rand"

	"github.com/floe-io/floe/cluster/fsm"
)

// encode frames a command for Raft. It carries a proposal id, drawn here
// once per proposal and kept by every resend of the same bytes, when every
// member of the group deduplicates by id (fsm.Member.ProposalIDs): during a
// rolling upgrade from a version without ids an older member would apply a
// resend that the others answer from their window, so until the last older
// member is gone proposals go without an id and apply as before.
func (n *Node) encode(c fsm.Command) ([]byte, error) {
	if !n.everyMemberDedupes() {
		return fsm.Encode(c)
	}
	return fsm.EncodeProposal(newProposalID(), c)
}

// everyMemberDedupes reports whether every member in the replicated
// membership, this node included, registered that its FSM deduplicates
// proposals by id. Until this node's own record is applied here its view
// of the membership may be behind (a node that just joined), so its first
// proposals (its RegisterNode, which a repeat leaves unchanged) go without
// an id. A member in the Raft configuration that has not registered yet is
// not seen: it registers within a second of joining.
func (n *Node) everyMemberDedupes() bool {
	all := false
	n.fsm.Read(func(s *fsm.State) {
		_, all = s.Nodes[n.cfg.ID]
		for _, m := range s.Nodes {
			all = all && m.ProposalIDs
		}
	})
	return all
}

// newProposalID draws a proposal id: 128 random bits (crypto/rand.Text), so
// ids never repeat across nodes or restarts. The FSM never draws one.
func newProposalID() string { return rand.Text() }
