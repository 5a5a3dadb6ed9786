package raftnode

import (
	"time"
)

// stepDownWhileHalted hands leadership away while this node's FSM is
// halted (fsm.Halt: an entry its build does not know). A halted leader
// still replicates, but its FSM answers every proposal with
// fsm.ErrUpgradeRequired, so the group would have no working leader. It
// transfers when the FSM halts and again whenever it wins an election while
// halted (a halted node still votes and may be elected); Raft picks the most
// up-to-date voter, which, if it is halted too, passes it on.
func (n *Node) stepDownWhileHalted() {
	ch, deregister := n.leaderChanges(4)
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer deregister()
		warned := false
		for {
			select {
			case <-n.stop:
				return
			case <-n.fsm.WatchHalt():
			}
			if _, halted := n.fsm.Halted(); halted && n.IsLeader() {
				if err := n.TransferLeadership(); err != nil && !warned {
					// A single voter has nobody to hand over to.
					warned = true
					n.log.Warn("upgrade required: this halted leader could not hand leadership over", "err", err)
				}
			}
			// Again at the next leader change; a retry bounds a transfer
			// that failed for want of a caught-up voter.
			select {
			case <-n.stop:
				return
			case <-ch:
			case <-time.After(2 * time.Second):
			}
		}
	}()
}
