package raftnode

import (
	"context"
	"fmt"

	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
)

// Operator actions on members, for the admin API. Each may be called on any
// node: a follower forwards to the leader over the internal RPC.

// TransferLeadershipTo hands leadership to voter id, or to any up-to-date
// voter when id is empty.
func (n *Node) TransferLeadershipTo(ctx context.Context, id string) error {
	_, err := n.rpcTransfer(ctx, &TransferRequest{ID: id})
	return err
}

func (n *Node) rpcTransfer(ctx context.Context, in *TransferRequest) (*Empty, error) {
	if n.raft.State() != raft.Leader {
		_, leader := n.raft.LeaderWithID()
		addr := n.rpcAddrOf(string(leader))
		if addr == "" {
			return nil, fmt.Errorf("transferring leadership: %w", ErrNotLeader)
		}
		var out Empty
		return &out, n.clients.call(ctx, addr, "Transfer", in, &out)
	}
	if in.ID == "" {
		return &Empty{}, n.TransferLeadership()
	}
	if in.ID == n.cfg.ID {
		return &Empty{}, nil // already leads
	}
	var addr raft.ServerAddress
	cf := n.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return nil, fmt.Errorf("transferring leadership: %w", err)
	}
	for _, s := range cf.Configuration().Servers {
		if string(s.ID) == in.ID {
			if s.Suffrage != raft.Voter {
				return nil, fmt.Errorf("transferring leadership to %s: not a voter: %w", in.ID, fsm.ErrUnknownNode)
			}
			addr = s.Address
		}
	}
	if addr == "" {
		return nil, fmt.Errorf("transferring leadership to %s: %w", in.ID, fsm.ErrUnknownNode)
	}
	if err := n.raft.LeadershipTransferToServer(raft.ServerID(in.ID), addr).Error(); err != nil {
		return nil, fmt.Errorf("transferring leadership to %s: %w", in.ID, err)
	}
	return &Empty{}, nil
}

// RemoveMember removes a member from the membership and the Raft
// configuration (for a node gone for good; a running node leaves with
// Leave). The leader cannot remove itself.
func (n *Node) RemoveMember(ctx context.Context, id string) error {
	_, err := n.rpcLeave(ctx, &LeaveRequest{ID: id})
	return err
}

// AppliedIndex is the index of the last log entry Raft applied here.
func (n *Node) AppliedIndex() uint64 { return n.raft.AppliedIndex() }
