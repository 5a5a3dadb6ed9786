package raftnode

import (
	"time"

	"github.com/hashicorp/raft"
)

// A node that is its group's only voter (a single-node cluster, at its
// bootstrap and at every restart) can only ever be led by itself, yet Raft
// starts it as a follower that waits a randomised heartbeat timeout (1-2 s
// by default) for a leader that cannot exist before it stands for
// election. On a real-broker drain of 2 M records that wait was 1.4-1.8 s
// of the 8.8 s from start to the last commit (docs/benchmarks.md's git history, run 21),
// and every test that starts a node paid it too.
//
// electAlone shortens the wait: it lowers the heartbeat timeout to the
// leader lease (the lowest value Raft accepts), which makes the follower
// loop check its timer at once, finds no contact ever, and stands for
// election. The configured timeout is restored as soon as a leader is seen
// (or after twice the configured timeout, or at Close), so a group that
// grows later runs with exactly the timeouts it was configured with. Only
// timing changes: a sole voter's election is decided by its own vote
// whenever it is held.

// soleVoter reports whether id is the only voter of c.
func soleVoter(c raft.Configuration, id raft.ServerID) bool {
	voters, self := 0, false
	for _, s := range c.Servers {
		if s.Suffrage == raft.Voter {
			voters++
			self = self || s.ID == id
		}
	}
	return voters == 1 && self
}

// electAlone starts the election of a sole voter now (see above); lease is
// the Raft config's leader lease timeout. It does nothing for any other
// configuration.
func (n *Node) electAlone(lease time.Duration) {
	f := n.raft.GetConfiguration()
	if f.Error() != nil || !soleVoter(f.Configuration(), raft.ServerID(n.cfg.ID)) {
		return
	}
	normal := n.raft.ReloadableConfig()
	if lease >= normal.HeartbeatTimeout {
		return
	}
	fast := normal
	fast.HeartbeatTimeout = lease
	// Observe before lowering, so the leader's arrival is not missed.
	ch, deregister := n.leaderChanges(1)
	if err := n.raft.ReloadConfig(fast); err != nil {
		deregister()
		n.log.Warn("could not shorten a sole voter's first election", "err", err)
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer deregister()
		t := time.NewTimer(2 * normal.HeartbeatTimeout)
		defer t.Stop()
		select {
		case <-n.stop:
			return
		case <-ch:
		case <-t.C:
		}
		if err := n.raft.ReloadConfig(normal); err != nil {
			n.log.Warn("could not restore the raft heartbeat timeout", "timeout", normal.HeartbeatTimeout, "err", err)
		}
	}()
}
