package raftnode

import (
	"context"
	"sync"
	"time"
)

// leaderBarrierTimeout bounds the barrier a new leader passes before it
// starts its leader-only tasks; a barrier that times out is tried again
// while the node still leads.
const leaderBarrierTimeout = 10 * time.Second

// RunWhileLeader runs every task each time this node becomes leader, with a
// context that ends when it loses leadership (or ctx ends), and waits for
// them to return before it starts them again on the next term. Leadership
// switches the leader-only subsystems on and off (the assignment
// controller, the state backup, the autopilot): none of them asks IsLeader
// in a loop, so none acts for a moment on a term it lost (STYLE pattern 8,
// Nomad's establishLeadership/revokeLeadership).
//
// Before the tasks start, the new leader passes a Raft barrier, so they
// read a state that holds every entry of the terms before (raft commits
// the new term's no-op first; the barrier waits until the FSM applied it).
// It returns when ctx ends or the node closes.
func (n *Node) RunWhileLeader(ctx context.Context, tasks ...func(context.Context)) {
	changes, deregister := n.leaderChanges(1)
	defer deregister()
	var revoke func() // ends this term's tasks and waits for them; nil while not leading
	defer func() {
		if revoke != nil {
			revoke()
		}
	}()
	for {
		// An observation comes after raft set its state, so the state
		// read here is at least as new as the change that woke the loop;
		// a dropped observation (buffer 1) is covered by the one queued.
		switch leading := n.IsLeader(); {
		case leading && revoke == nil:
			revoke = n.establishLeadership(ctx, tasks)
		case !leading && revoke != nil:
			revoke()
			revoke = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-n.stop:
			return
		case <-changes:
		}
	}
}

// establishLeadership starts tasks on a term this node leads, once a
// barrier has passed, and returns the function that revokes them.
func (n *Node) establishLeadership(parent context.Context, tasks []func(context.Context)) func() {
	ctx, cancel := context.WithCancel(parent)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			err := n.raft.Barrier(leaderBarrierTimeout).Error()
			if err == nil {
				break
			}
			n.log.Warn("leader barrier before starting leader tasks", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
		if ctx.Err() != nil {
			return
		}
		for _, task := range tasks {
			wg.Add(1)
			go func() { defer wg.Done(); task(ctx) }()
		}
	}()
	return func() { cancel(); wg.Wait() }
}
