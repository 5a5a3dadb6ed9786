package raftnode

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
)

// removeMember drops a node from the membership (so its work moves) and
// from the Raft configuration. Leader only.
func (n *Node) removeMember(ctx context.Context, id string) error {
	data, err := n.encode(fsm.RemoveNode{ID: id})
	if err != nil {
		return err
	}
	if _, err := n.applyLocal(ctx, data); err != nil {
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
// configuration. The caller closes the node afterwards; until then it does
// not ask to rejoin (rejoin.go).
func (n *Node) Leave(ctx context.Context) error {
	n.left.Store(true)
	if n.IsLeader() {
		if err := n.TransferLeadership(); err != nil {
			// A single-node group has nobody to transfer to.
			n.log.Warn("leaving as leader", "err", err)
			return nil
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := internalService{n}.rpcLeave(ctx, &LeaveRequest{ID: n.cfg.ID})
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("leaving the group: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// self is this node's membership record as it should be replicated. It
// keeps proposal_ids beside protocol: a member of the build before protocol
// attaches proposal ids only while every record says proposal_ids.
func (n *Node) self() fsm.Member {
	m := fsm.Member{ID: n.cfg.ID, Addr: n.cfg.Advertise, RPC: n.cfg.RPCAdvertise, Admin: n.cfg.AdminAddr, Version: n.cfg.Version,
		ProposalIDs: true, Protocol: fsm.ProtocolLevel, Draining: n.draining.Load()}
	if a, err := advertisable(m.Admin); err == nil {
		m.Admin = a
	}
	if n.transport != nil && m.Addr == "" {
		m.Addr = string(n.transport.LocalAddr())
	}
	if n.cfg.Zone != "" {
		m.Attrs = map[string]string{"zone": n.cfg.Zone}
	}
	return m
}

// Registered reports whether the replicated membership holds this node.
func (n *Node) Registered() bool {
	var ok bool
	n.fsm.Read(func(s *fsm.State) { _, ok = s.Nodes[n.cfg.ID] })
	return ok
}

// ensureRegistered adds or refreshes this node's membership record once it
// is part of the Raft configuration (a new address or version after a
// restart). The draining mark: a process that drains registers as draining
// (a node that rejoined registers while it may already be draining); a mark
// set on the running process (DrainNode through the admin API) is kept, or
// the drain would be undone within one autopilot tick; a restarted process
// keeps an operator's mark (DrainedByOperator: only an undrain clears it)
// and clears any other left from before (a drain of its own shutdown, cut
// short), since its first registration rewrites the record.
func (n *Node) ensureRegistered() {
	if !n.IsMember() {
		return
	}
	if !n.registered.Load() {
		// A restarted process replays its log in the background: its
		// first registration, which rewrites the whole record, must be
		// decided on a state as current as the leader's, or it would undo
		// what it has not applied yet (an operator's drain mark).
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err := n.Sync(ctx)
		cancel()
		if err != nil {
			n.log.Debug("registering this node: catching up first", "err", err)
			return
		}
	}
	want := n.self()
	var (
		cur    *fsm.Member
		lowest int
	)
	n.fsm.Read(func(s *fsm.State) {
		if m, ok := s.Nodes[n.cfg.ID]; ok {
			c := *m
			cur = &c
		}
		lowest = s.MinProtocol()
	})
	if cur != nil && cur.DrainedByOperator && lowest >= fsm.ProtocolOperatorDrain {
		want.Draining, want.DrainedByOperator = true, true
	}
	if cur != nil && n.registered.Load() {
		want.Draining = want.Draining || cur.Draining // a mark set on this process stays
	}
	if cur != nil && sameRecord(*cur, want) {
		n.registered.Store(true)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := n.Apply(ctx, fsm.RegisterNode{Node: want}); err != nil {
		n.log.Debug("registering this node", "err", err)
		return
	}
	n.registered.Store(true)
}

// sameRecord reports whether the replicated record cur already says all
// that want does.
func sameRecord(cur, want fsm.Member) bool {
	return cur.Addr == want.Addr && cur.RPC == want.RPC && cur.Admin == want.Admin &&
		cur.Version == want.Version && cur.Zone() == want.Zone() && cur.ProposalIDs == want.ProposalIDs &&
		cur.Protocol == want.Protocol && cur.Draining == want.Draining && cur.DrainedByOperator == want.DrainedByOperator
}

// MarkDraining marks this node as draining in the replicated membership, so
// the assignment controller moves its partitions and committer roles away.
//
// A node the leader's membership does not hold (one that just rejoined and
// whose RegisterNode is not applied yet, or one removed meanwhile) registers
// instead, marked draining: the controller then gives it no work and moves
// what it still holds, and Leave removes it as any other.
func (n *Node) MarkDraining(ctx context.Context) error {
	n.draining.Store(true)
	_, err := n.Apply(ctx, fsm.DrainNode{ID: n.cfg.ID, Draining: true})
	if errors.Is(err, fsm.ErrUnknownNode) {
		n.log.Info("draining a node the membership does not hold yet: registering it as draining")
		_, err = n.Apply(ctx, fsm.RegisterNode{Node: n.self()})
	}
	if err != nil {
		return fmt.Errorf("marking node %s draining: %w", n.cfg.ID, err)
	}
	return nil
}
