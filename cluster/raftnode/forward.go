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
//
// The command carries a proposal id drawn here, once (see encode): every
// resend of it carries the same id, and the FSM answers a resend of an
// applied proposal with the first answer instead of applying it twice.
func (n *Node) Apply(ctx context.Context, c fsm.Command) (uint64, error) {
	data, err := n.encode(c)
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
	if err != nil && !fsm.IsRefusal(err) {
		// The FSM's refusals name what they refused; wrapping them again
		// would only repeat it.
		return idx, fmt.Errorf("applying %s: %w", c.Type(), err)
	}
	if err != nil {
		return idx, err
	}
	return idx, nil
}

// applyRaw applies encoded command bytes locally when leader, else forwards
// them. A forward is resent when it was not applied (no leader known, or
// the receiver was no longer leader) and when the leader became unreachable
// before answering, in which case it may have been applied: the resend
// carries the same proposal id, so the FSM answers it with the first
// answer (a deleted mapping stays deleted and answers success, not "no
// such mapping"). Other ambiguous failures are returned.
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
			// have been applied if the connection broke mid-call; its
			// proposal id makes the FSM answer the repeat as the first.
			return 0, fmt.Errorf("forwarding to leader %s: %v: %w", leaderID, err, ErrNotLeader)
		}
		return 0, fmt.Errorf("forwarding to leader %s: %w", leaderID, err)
	}
	if resp.Err != nil {
		err := fromWire(resp.Err)
		if errors.Is(err, fsm.ErrUpgradeRequired) && resp.Index > 0 {
			return n.verdictHere(ctx, data, resp.Index, string(leaderID), err)
		}
		return resp.Index, err
	}
	if err := n.fsm.WaitApplied(ctx, resp.Index); err != nil {
		return resp.Index, fmt.Errorf("waiting for local apply of index %d: %w", resp.Index, err)
	}
	return resp.Index, nil
}

// verdictHere answers a proposal the leader committed at index but could not
// apply: its FSM is halted (an entry up to this one is of a type its build
// does not know), so its "upgrade required" says nothing of the proposal,
// which the members of newer builds apply. Reporting that as a failure would
// tell the caller a committed write failed. This node applies the entry
// itself and answers with the verdict its FSM recorded under the
// proposal's id. Without an id (a group with members before ids), or on a
// node halted too, the leader's answer stands, naming the index.
func (n *Node) verdictHere(ctx context.Context, data []byte, index uint64, leader string, leaderErr error) (uint64, error) {
	id := fsm.ProposalID(data)
	if id == "" {
		return index, fmt.Errorf("leader %s committed the entry at index %d but could not apply it: %w", leader, index, leaderErr)
	}
	if err := n.fsm.WaitApplied(ctx, index); err != nil {
		return index, fmt.Errorf("leader %s committed the entry at index %d but could not apply it (%v); waiting to apply it here: %w", leader, index, leaderErr, err)
	}
	var (
		res fsm.ProposalResult
		ok  bool
	)
	n.fsm.Read(func(s *fsm.State) { res, ok = s.Proposals.Lookup(id) })
	if !ok {
		// Applied here long enough ago to have left the window: it was
		// applied, but its answer is no longer known.
		return index, fmt.Errorf("leader %s committed the entry at index %d (applied here; its answer has left the proposal window): %w", leader, index, leaderErr)
	}
	n.log.Info("the leader cannot apply what it committed (upgrade required); answering with this node's verdict", "leader", leader, "index", index)
	return index, res.Err()
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
	// Raft's applied index moves when it hands entries to the FSM, which
	// applies them a moment later (a node catching up after a restart
	// lags by whole batches): also wait until the FSM applied the
	// leader's last command.
	if err := n.fsm.WaitApplied(ctx, info.FSMApplied); err != nil {
		return fmt.Errorf("syncing with leader %s: waiting for command %d: %w", leaderID, info.FSMApplied, err)
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
