package raftnode

import (
	"time"

	"github.com/hashicorp/raft"
)

// Observer is told of events that metrics count; the node wires its
// metrics here.
type Observer interface {
	// ObserveApply: a command this node applied as leader took d from
	// proposal to commit and apply.
	ObserveApply(d time.Duration)
	// LeaderChanged: this node saw the leader change (or be lost).
	LeaderChanged()
}

// observeLeaders records when this node last saw the leader change and
// tells the Observer, until the node closes.
func (n *Node) observeLeaders() {
	ch, deregister := n.leaderChanges(16)
	changed := func() {
		n.leaderChangedAt.Store(time.Now().UnixNano())
		if n.cfg.Observer != nil {
			n.cfg.Observer.LeaderChanged()
		}
	}
	// A single node bootstrapped alone can elect itself before the observer
	// is registered; that first election is counted here. last dedupes it
	// against an observation of the same leader already in the channel.
	_, last := n.raft.LeaderWithID()
	if last != "" {
		changed()
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer deregister()
		for {
			select {
			case <-n.stop:
				return
			case o := <-ch:
				lo, _ := o.Data.(raft.LeaderObservation)
				if lo.LeaderID == last && last != "" {
					continue
				}
				last = lo.LeaderID
				changed()
			}
		}
	}()
}

// LeaderChangedAt is when this node last saw the leader change (zero before
// the first time).
func (n *Node) LeaderChangedAt() time.Time {
	ns := n.leaderChangedAt.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// leaderChanges registers an observer of this node's leader changes and
// returns its channel and the function that deregisters it. Raft does not
// block on a full channel: an observation is dropped, which the loops here
// allow (each only needs to learn that something changed).
func (n *Node) leaderChanges(buf int) (<-chan raft.Observation, func()) {
	ch := make(chan raft.Observation, buf)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.LeaderObservation)
		return ok
	})
	n.raft.RegisterObserver(obs)
	return ch, func() { n.raft.DeregisterObserver(obs) }
}
