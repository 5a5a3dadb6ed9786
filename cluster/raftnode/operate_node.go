package raftnode

import (
	"context"
)

// Operator actions on members, for the admin API. Each may be called on any
// node: a follower forwards to the leader over the internal RPC.

// TransferLeadershipTo hands leadership to voter id, or to any up-to-date
// voter when id is empty.
func (n *Node) TransferLeadershipTo(ctx context.Context, id string) error {
	_, err := internalService{n}.rpcTransfer(ctx, &TransferRequest{ID: id})
	return err
}

// RemoveMember removes a member from the membership and the Raft
// configuration (for a node gone for good; a running node leaves with
// Leave). The leader cannot remove itself.
func (n *Node) RemoveMember(ctx context.Context, id string) error {
	_, err := internalService{n}.rpcLeave(ctx, &LeaveRequest{ID: id})
	return err
}

// AppliedIndex is the index of the last log entry Raft applied here.
func (n *Node) AppliedIndex() uint64 { return n.raft.AppliedIndex() }
