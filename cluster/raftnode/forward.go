package raftnode

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
)

// Apply proposes a command and waits until it is applied here. On a
// follower the command is forwarded to the leader over the internal RPC;
// Apply then also waits until the local FSM has applied the entry, so that a
// caller reads its own write from the local state. It returns the log index
// and the FSM's verdict. Concurrent proposals are batched by Raft into one
// log write, which is what keeps fsync cost per commit low.
func (n *Node) Apply(ctx context.Context, c fsm.Command) (uint64, error) {
	data, err := fsm.Encode(c)
	if err != nil {
		return 0, err
	}
	timeout := n.cfg.ApplyTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	idx, err := n.applyRaw(ctx, data)
	if err != nil {
		return idx, fmt.Errorf("applying %s: %w", c.Type(), err)
	}
	return idx, nil
}

// applyRaw applies encoded command bytes locally when leader, else forwards
// them. A forward is retried only when it cannot have been applied (no
// leader known, leader unreachable before answering, or the receiver was no
// longer leader); an ambiguous failure is returned, and the fencing rules
// make a repeated command harmless (a repeated record is refused as an
// overlap, a repeated commit fails its compare-and-swap).
func (n *Node) applyRaw(ctx context.Context, data []byte) (uint64, error) {
	for {
		if n.raft.State() == raft.Leader {
			return n.applyLocal(ctx, data)
		}
		idx, err := n.forward(ctx, data)
		if err == nil || !errors.Is(err, ErrNotLeader) {
			return idx, err
		}
		select {
		case <-ctx.Done():
			return 0, err
		case <-n.stop:
			return 0, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (n *Node) applyLocal(ctx context.Context, data []byte) (uint64, error) {
	timeout := n.cfg.ApplyTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	start := time.Now()
	f := n.raft.Apply(data, timeout)
	err := f.Error()
	if n.cfg.Observer != nil && err == nil {
		n.cfg.Observer.ObserveApply(time.Since(start))
	}
	if err != nil {
		if errors.Is(err, raft.ErrNotLeader) {
			// Raft refused before appending: certainly not applied.
			return 0, fmt.Errorf("%v: %w", err, ErrNotLeader)
		}
		// raft.ErrLeadershipLost and timeouts are ambiguous: the entry
		// may still commit under the next leader. They are retryable
		// (IsRetryable) but applyRaw does not resend them itself.
		return 0, err
	}
	res, _ := f.Response().(ApplyResult)
	return f.Index(), res.Err
}

// forward sends a command to the leader. ErrNotLeader means it was
// certainly not applied.
func (n *Node) forward(ctx context.Context, data []byte) (uint64, error) {
	_, leaderID := n.raft.LeaderWithID()
	if leaderID == "" {
		return 0, ErrNotLeader
	}
	addr := n.rpcAddrOf(string(leaderID))
	if addr == "" {
		return 0, fmt.Errorf("leader %s has no known rpc address: %w", leaderID, ErrNotLeader)
	}
	var resp ApplyResponse
	if err := n.clients.call(ctx, addr, "Apply", &ApplyRequest{Command: data}, &resp); err != nil {
		if unreachable(err) && ctx.Err() == nil {
			// Unreachable leader: retry until the deadline, the group
			// elects another or the connection comes back. A command may
			// have been applied if the connection broke mid-call; fencing
			// makes a repeat harmless.
			return 0, fmt.Errorf("forwarding to leader %s: %v: %w", leaderID, err, ErrNotLeader)
		}
		return 0, fmt.Errorf("forwarding to leader %s: %w", leaderID, err)
	}
	if resp.Err != nil {
		return resp.Index, fromWire(resp.Err)
	}
	if err := n.fsm.WaitApplied(ctx, resp.Index); err != nil {
		return resp.Index, fmt.Errorf("waiting for local apply of index %d: %w", resp.Index, err)
	}
	return resp.Index, nil
}

// rpcAddrOf returns a member's internal RPC address from the replicated
// membership.
func (n *Node) rpcAddrOf(id string) string {
	if id == n.cfg.ID {
		return n.cfg.RPCAdvertise
	}
	var addr string
	n.fsm.Read(func(s *fsm.State) {
		if m, ok := s.Nodes[id]; ok {
			addr = m.RPC
		}
	})
	return addr
}

func (n *Node) rpcApply(ctx context.Context, in *ApplyRequest) (*ApplyResponse, error) {
	if n.raft.State() != raft.Leader {
		return &ApplyResponse{Err: toWire(ErrNotLeader)}, nil
	}
	idx, err := n.applyLocal(ctx, in.Command)
	return &ApplyResponse{Index: idx, Err: toWire(err)}, nil
}

func (n *Node) rpcInfo(_ context.Context, _ *InfoRequest) (*InfoResponse, error) {
	_, leader := n.raft.LeaderWithID()
	out := &InfoResponse{
		ID: n.cfg.ID, RaftAddr: string(n.transport.LocalAddr()), RPCAddr: n.cfg.RPCAdvertise,
		Version: n.cfg.Version, Zone: n.cfg.Zone, HasState: n.IsMember(), LeaderID: string(leader),
		Applied: n.raft.AppliedIndex(), LastIndex: n.raft.LastIndex(),
	}
	if n.cfg.Advertise != "" {
		out.RaftAddr = n.cfg.Advertise
	}
	if n.cfg.Load != nil {
		out.Load = n.cfg.Load()
	}
	return out, nil
}

// rpcJoin adds a node as a non-voter; the autopilot promotes it to voter
// when the group needs one. Followers pass the request to the leader.
func (n *Node) rpcJoin(ctx context.Context, in *JoinRequest) (*Empty, error) {
	if in.ID == "" || in.RaftAddr == "" {
		return nil, fmt.Errorf("join needs an id and a raft address")
	}
	if n.raft.State() != raft.Leader {
		_, leader := n.raft.LeaderWithID()
		addr := n.rpcAddrOf(string(leader))
		if addr == "" {
			return nil, fmt.Errorf("joining %s: %w", in.ID, ErrNotLeader)
		}
		var out Empty
		return &out, n.clients.call(ctx, addr, "Join", in, &out)
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

// rpcLeave removes a node from the configuration and the membership.
func (n *Node) rpcLeave(ctx context.Context, in *LeaveRequest) (*Empty, error) {
	if n.raft.State() != raft.Leader {
		_, leader := n.raft.LeaderWithID()
		addr := n.rpcAddrOf(string(leader))
		if addr == "" {
			return nil, fmt.Errorf("removing %s: %w", in.ID, ErrNotLeader)
		}
		var out Empty
		return &out, n.clients.call(ctx, addr, "Leave", in, &out)
	}
	return &Empty{}, n.removeMember(ctx, in.ID)
}

// removeMember drops a node from the membership (so its work moves) and
// from the Raft configuration. Leader only.
func (n *Node) removeMember(ctx context.Context, id string) error {
	if _, err := n.applyLocal(ctx, mustEncode(fsm.RemoveNode{ID: id})); err != nil {
		return fmt.Errorf("removing member %s: %w", id, err)
	}
	if id == n.cfg.ID {
		return nil // a leader never removes itself from Raft: it transfers first
	}
	if err := n.raft.RemoveServer(raft.ServerID(id), 0, 10*time.Second).Error(); err != nil {
		return fmt.Errorf("removing %s from the raft configuration: %w", id, err)
	}
	n.health.forget(id)
	n.log.Info("node removed", "removed", id)
	return nil
}

func mustEncode(c fsm.Command) []byte {
	b, err := fsm.Encode(c)
	if err != nil {
		panic(err) // the fixed command types always encode
	}
	return b
}

// TransferLeadership hands leadership to another voter, if this node leads.
func (n *Node) TransferLeadership() error {
	if n.raft.State() != raft.Leader {
		return nil
	}
	if err := n.raft.LeadershipTransfer().Error(); err != nil {
		return fmt.Errorf("transferring leadership: %w", err)
	}
	return nil
}

// Leave removes this node from the group: leadership first moves to another
// voter, then the leader drops this node from the membership and the Raft
// configuration. The caller closes the node afterwards.
func (n *Node) Leave(ctx context.Context) error {
	if n.IsLeader() {
		if err := n.TransferLeadership(); err != nil {
			// A single-node group has nobody to transfer to.
			n.log.Warn("leaving as leader", "err", err)
			return nil
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := n.rpcLeave(ctx, &LeaveRequest{ID: n.cfg.ID})
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("leaving the group: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Sync waits until this node's state includes every entry the leader had
// applied when Sync was called: read-after-commit consistency for a read
// served from the local state. On the leader it is a Raft barrier.
func (n *Node) Sync(ctx context.Context) error {
	if n.raft.State() == raft.Leader {
		timeout := n.cfg.ApplyTimeout
		if dl, ok := ctx.Deadline(); ok {
			timeout = max(time.Until(dl), time.Millisecond)
		}
		if err := n.raft.Barrier(timeout).Error(); err != nil {
			return fmt.Errorf("raft barrier: %w", err)
		}
		return nil
	}
	_, leaderID := n.raft.LeaderWithID()
	addr := n.rpcAddrOf(string(leaderID))
	if leaderID == "" || addr == "" {
		return fmt.Errorf("syncing with the leader: %w", ErrNotLeader)
	}
	var info InfoResponse
	if err := n.clients.call(ctx, addr, "Info", &InfoRequest{}, &info); err != nil {
		return fmt.Errorf("syncing with leader %s: %w", leaderID, err)
	}
	// The leader's applied index counts every log entry, also those that
	// carry no command (configuration changes, barriers, the no-op of an
	// election), which the FSM's own counter skips: wait on Raft's.
	if err := n.waitRaftApplied(ctx, info.Applied); err != nil {
		return fmt.Errorf("syncing with leader %s: waiting for index %d: %w", leaderID, info.Applied, err)
	}
	return nil
}

// waitRaftApplied blocks until Raft has applied the log up to index. Raft
// has no notification for it, so it polls; Sync is a rare call.
func (n *Node) waitRaftApplied(ctx context.Context, index uint64) error {
	for n.raft.AppliedIndex() < index {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-n.stop:
			return ErrRaftShutdownLocal
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}
