package raftnode

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
)

// autopilot keeps the membership healthy. On every node it keeps the
// node's own membership record current (register). On the leader alone,
// switched on and off by leadership (RunWhileLeader), it checks members'
// health every second, keeps the number of voters at the largest odd
// number not above MaxVoters that the healthy members allow, replaces
// failed voters by healthy non-voters, and removes members unreachable for
// longer than DeadServerTimeout.
type autopilot struct{ n *Node }

// register keeps this node's membership record current, until the node
// closes. A leader change runs it at once as well as the tick: a node
// registers itself (which its start waits for) as soon as it knows a
// leader, rather than up to a second later.
func (a autopilot) register() {
	n := a.n
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	leaders, deregister := n.leaderChanges(1)
	defer deregister()
	for {
		select {
		case <-n.stop:
			return
		case <-tick.C:
		case <-leaders:
		}
		n.ensureRegistered()
	}
}

// lead is the leader's share, for one term: health checks and voter
// reconciliation at once and every second until ctx ends with the term.
func (a autopilot) lead(ctx context.Context) {
	n := a.n
	n.health.start(time.Now())
	defer n.health.stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		a.checkHealth()
		a.reconcileVoters()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (a autopilot) checkHealth() {
	n := a.n
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		clocks = map[string]clockSample{}
	)
	for _, s := range f.Configuration().Servers {
		id := string(s.ID)
		if id == n.cfg.ID {
			continue
		}
		addr := n.rpcAddrOf(id)
		if addr == "" {
			continue // not registered yet
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 900*time.Millisecond)
			defer cancel()
			var info InfoResponse
			sent := n.now()
			if err := n.clients.call(ctx, addr, "Info", &InfoRequest{}, &info); err == nil && info.ID == id {
				received := n.now()
				n.health.ok(id, info, time.Now())
				if info.Now != 0 { // 0: a build before the field
					mu.Lock()
					clocks[id] = sampleClock(sent, received, info.Now)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	n.health.mu.Lock()
	n.health.judgeClocks(n.cfg.ID, clocks, time.Now())
	n.health.mu.Unlock()
}

// desiredVoters is the number of voters to grow to: the largest odd number
// not above max and the number of healthy members. The autopilot only
// promotes towards it; it never demotes a healthy voter to reach it (fewer
// copies of the log buy nothing), only to respect max.
func desiredVoters(healthy, max int) int {
	d := min(healthy, max)
	if d%2 == 0 {
		d--
	}
	return maxInt(d, 1)
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func (a autopilot) reconcileVoters() {
	n := a.n
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	now := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var voters, healthyVoters, healthyNonvoters, failedVoters []raft.Server
	healthy := 0
	for _, s := range f.Configuration().Servers {
		id := string(s.ID)
		ok := id == n.cfg.ID || n.health.healthy(id, now)
		if !ok && id != n.cfg.ID && n.health.unreachableFor(id, now) > n.cfg.DeadServerTimeout {
			n.log.Warn("removing dead member", "member", id, "unreachable", n.health.unreachableFor(id, now).Round(time.Second))
			if err := n.removeMember(ctx, id); err != nil {
				n.log.Warn("removing dead member", "member", id, "err", err)
			}
			return // one change per round; the configuration changed
		}
		if ok {
			healthy++
		}
		switch {
		case s.Suffrage == raft.Voter && ok:
			voters = append(voters, s)
			healthyVoters = append(healthyVoters, s)
		case s.Suffrage == raft.Voter:
			voters = append(voters, s)
			failedVoters = append(failedVoters, s)
		case ok && a.caughtUp(string(s.ID)):
			healthyNonvoters = append(healthyNonvoters, s)
		}
	}
	want := desiredVoters(healthy, n.cfg.MaxVoters)
	switch {
	case len(failedVoters) > 0 && len(healthyNonvoters) > 0:
		// Replace a failed voter: add the replacement first so the
		// group never has fewer healthy voters than before.
		p := a.pickNonvoter(healthyNonvoters, healthyVoters)
		if err := n.raft.AddVoter(p.ID, p.Address, 0, 10*time.Second).Error(); err != nil {
			n.log.Warn("promoting member", "member", p.ID, "err", err)
			return
		}
		n.log.Info("promoted member to voter", "member", p.ID, "replacing", failedVoters[0].ID)
		if err := n.raft.DemoteVoter(failedVoters[0].ID, 0, 10*time.Second).Error(); err != nil {
			n.log.Warn("demoting failed voter", "member", failedVoters[0].ID, "err", err)
		}
	case len(healthyVoters) < want && len(voters) < n.cfg.MaxVoters && len(healthyNonvoters) > 0:
		p := a.pickNonvoter(healthyNonvoters, healthyVoters)
		if err := n.raft.AddVoter(p.ID, p.Address, 0, 10*time.Second).Error(); err != nil {
			n.log.Warn("promoting member", "member", p.ID, "err", err)
			return
		}
		n.log.Info("promoted member to voter", "member", p.ID, "voters", len(voters)+1)
	case len(voters) > n.cfg.MaxVoters:
		a.demoteOne(len(voters), healthyVoters, failedVoters)
	}
}

// demoteOne handles more voters than allowed (max lowered, or replacements
// added while failed voters came back): it demotes a failed one first, else
// the last healthy one that is not the leader.
func (a autopilot) demoteOne(voters int, healthyVoters, failedVoters []raft.Server) {
	n := a.n
	var d raft.Server
	if len(failedVoters) > 0 {
		d = failedVoters[0]
	} else {
		for i := len(healthyVoters) - 1; i >= 0; i-- {
			if string(healthyVoters[i].ID) != n.cfg.ID {
				d = healthyVoters[i]
				break
			}
		}
	}
	if d.ID == "" {
		return
	}
	if err := n.raft.DemoteVoter(d.ID, 0, 10*time.Second).Error(); err != nil {
		n.log.Warn("demoting voter", "member", d.ID, "err", err)
		return
	}
	n.log.Info("demoted voter", "member", d.ID, "voters", voters-1)
}

// caughtUp: a non-voter is promoted only once its log is close to the
// leader's, so that promoting it does not stall commits.
func (a autopilot) caughtUp(id string) bool {
	n := a.n
	n.health.mu.Lock()
	info, ok := n.health.infos[id]
	n.health.mu.Unlock()
	return ok && info.Applied+1000 >= n.raft.AppliedIndex()
}

// pickNonvoter prefers a member in a zone that has no healthy voter yet, so
// voters spread across zones; then the lowest id.
func (a autopilot) pickNonvoter(cands, voters []raft.Server) raft.Server {
	n := a.n
	zones := map[string]bool{}
	var nodes map[string]string
	n.fsm.Read(func(s *fsm.State) {
		nodes = map[string]string{}
		for id, m := range s.Nodes {
			nodes[id] = m.Zone()
		}
	})
	for _, v := range voters {
		zones[nodes[string(v.ID)]] = true
	}
	slices.SortFunc(cands, func(a, b raft.Server) int {
		za, zb := zones[nodes[string(a.ID)]], zones[nodes[string(b.ID)]]
		if za != zb {
			if !za {
				return -1
			}
			return 1
		}
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return cands[0]
}
