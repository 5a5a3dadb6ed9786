package raftnode

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
)

// BarrierRequest asks the leader for a read barrier.
type BarrierRequest struct{}

// BarrierResponse is the leader's answer: the index of the last command its
// FSM had applied once a barrier entry of its term committed, or why it
// could not run one.
type BarrierResponse struct {
	Applied uint64     `json:"applied"`
	Err     *wireError `json:"err,omitempty"`
}

// ReadBarrier returns once this node's FSM holds every command the group
// had committed when ReadBarrier was called, so that what it reads next
// from its local state is current (a linearizable read). On the leader it
// is a Raft barrier: an entry of the leader's term that a majority must
// accept, which a deposed leader cannot commit. A follower asks the leader
// (the internal RPC Barrier) to run one and to answer the last command its
// FSM applied, then waits until its own FSM has applied that command. A
// node cut off from the majority fails: its leader cannot commit the
// barrier, or no leader answers before ctx or the apply timeout ends.
// Unlike Sync, which trusts the applied index of whichever node this one
// believes leads, a stale leader cannot pass it. A leader of an older
// version, which lacks the RPC, fails it too.
func (n *Node) ReadBarrier(ctx context.Context) error {
	timeout := n.cfg.ApplyTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := n.readBarrierOnce(ctx)
		if err == nil || !errors.Is(err, ErrNotLeader) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("read barrier: %w (%v)", err, ctx.Err())
		case <-n.stop:
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readBarrierOnce runs the barrier here when leader, else asks the leader.
// ErrNotLeader means it may be tried again.
func (n *Node) readBarrierOnce(ctx context.Context) error {
	if n.raft.State() == raft.Leader {
		_, err := n.barrierLocal(ctx)
		return err
	}
	_, leaderID := n.raft.LeaderWithID()
	if leaderID == "" {
		return fmt.Errorf("read barrier: %w", ErrNotLeader)
	}
	addr := n.rpcAddrOf(string(leaderID))
	if addr == "" {
		return fmt.Errorf("read barrier: leader %s has no known rpc address: %w", leaderID, ErrNotLeader)
	}
	var resp BarrierResponse
	if err := n.clients.call(ctx, addr, "Barrier", &BarrierRequest{}, &resp); err != nil {
		if unreachable(err) && ctx.Err() == nil {
			return fmt.Errorf("read barrier through leader %s: %v: %w", leaderID, err, ErrNotLeader)
		}
		return fmt.Errorf("read barrier through leader %s: %w", leaderID, err)
	}
	if resp.Err != nil {
		return fmt.Errorf("read barrier through leader %s: %w", leaderID, fromWire(resp.Err))
	}
	if err := n.fsm.WaitApplied(ctx, resp.Applied); err != nil {
		return fmt.Errorf("read barrier: waiting for local apply of index %d: %w", resp.Applied, err)
	}
	return nil
}

// barrierLocal commits a barrier entry as leader and returns the index of
// the last command the FSM had applied then: Raft answers a barrier only
// after the FSM applied every entry before it.
func (n *Node) barrierLocal(ctx context.Context) (uint64, error) {
	timeout := n.cfg.ApplyTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	if err := n.raft.Barrier(timeout).Error(); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
			return 0, fmt.Errorf("raft barrier: %v: %w", err, ErrNotLeader)
		}
		return 0, fmt.Errorf("raft barrier: %w", err)
	}
	var applied uint64
	n.fsm.Read(func(s *fsm.State) { applied = s.Applied })
	return applied, nil
}

// rpcBarrier runs a read barrier for a follower (ReadBarrier).
func (s internalService) rpcBarrier(ctx context.Context, _ *BarrierRequest) (*BarrierResponse, error) {
	if s.n.raft.State() != raft.Leader {
		return &BarrierResponse{Err: toWire(ErrNotLeader)}, nil
	}
	applied, err := s.n.barrierLocal(ctx)
	return &BarrierResponse{Applied: applied, Err: toWire(err)}, nil
}
