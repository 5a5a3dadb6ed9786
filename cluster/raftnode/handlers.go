package raftnode

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
)

// internalService serves the internal RPC (rpc.go) for a node: command
// forwarding, Info, Join, Leave and Transfer. Followers pass Join, Leave and
// Transfer on to the leader.
type internalService struct{ n *Node }

func (s internalService) rpcApply(ctx context.Context, in *ApplyRequest) (*ApplyResponse, error) {
	n := s.n
	if n.raft.State() != raft.Leader {
		return &ApplyResponse{Err: toWire(ErrNotLeader)}, nil
	}
	idx, err := n.applyLocal(ctx, in.Command)
	return &ApplyResponse{Index: idx, Err: toWire(err)}, nil
}

func (s internalService) rpcInfo(_ context.Context, _ *InfoRequest) (*InfoResponse, error) {
	n := s.n
	_, leader := n.raft.LeaderWithID()
	out := &InfoResponse{
		ID: n.cfg.ID, RaftAddr: string(n.transport.LocalAddr()), RPCAddr: n.cfg.RPCAdvertise,
		Version: n.cfg.Version, Zone: n.cfg.Zone, HasState: n.IsMember(), LeaderID: string(leader),
		Applied: n.raft.AppliedIndex(), LastIndex: n.raft.LastIndex(),
	}
	n.fsm.Read(func(st *fsm.State) { out.FSMApplied = st.Applied })
	if n.cfg.Advertise != "" {
		out.RaftAddr = n.cfg.Advertise
	}
	if n.cfg.Load != nil {
		out.Load = n.cfg.Load()
	}
	_, out.Halted = n.fsm.Halted()
	out.StorageFailing = n.StorageProblem() != ""
	out.Now = n.now().UnixMilli()
	return out, nil
}

// rpcJoin adds a node as a non-voter; the autopilot promotes it to voter
// when the group needs one. Followers pass the request to the leader.
func (s internalService) rpcJoin(ctx context.Context, in *JoinRequest) (*Empty, error) {
	n := s.n
	if in.ID == "" || in.RaftAddr == "" {
		return nil, fmt.Errorf("join needs an id and a raft address")
	}
	if n.raft.State() != raft.Leader {
		return n.toLeader(ctx, "Join", in, fmt.Sprintf("joining %s", in.ID))
	}
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	for _, s := range f.Configuration().Servers {
		if s.ID == raft.ServerID(in.ID) && s.Address == raft.ServerAddress(in.RaftAddr) {
			return &Empty{}, nil // already a member
		}
	}
	if err := n.raft.AddNonvoter(raft.ServerID(in.ID), raft.ServerAddress(in.RaftAddr), 0, 10*time.Second).Error(); err != nil {
		return nil, fmt.Errorf("adding %s at %s: %w", in.ID, in.RaftAddr, err)
	}
	n.log.Info("node joined", "joined", in.ID, "raft", in.RaftAddr)
	return &Empty{}, nil
}

// toLeader passes a request only the leader serves to the leader's
// internal RPC service; what names the request in the error when this
// node knows no leader.
func (n *Node) toLeader(ctx context.Context, method string, in any, what string) (*Empty, error) {
	_, leader := n.raft.LeaderWithID()
	addr := n.rpcAddrOf(string(leader))
	if addr == "" {
		return nil, fmt.Errorf("%s: %w", what, ErrNotLeader)
	}
	var out Empty
	return &out, n.clients.call(ctx, addr, method, in, &out)
}

// rpcLeave removes a node from the configuration and the membership.
func (s internalService) rpcLeave(ctx context.Context, in *LeaveRequest) (*Empty, error) {
	n := s.n
	if n.raft.State() != raft.Leader {
		return n.toLeader(ctx, "Leave", in, fmt.Sprintf("removing %s", in.ID))
	}
	return &Empty{}, n.removeMember(ctx, in.ID)
}

func (s internalService) rpcTransfer(ctx context.Context, in *TransferRequest) (*Empty, error) {
	n := s.n
	if n.raft.State() != raft.Leader {
		return n.toLeader(ctx, "Transfer", in, "transferring leadership")
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
