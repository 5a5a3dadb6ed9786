package raftnode

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
)

// healthTracker is the leader's view of which members answer. It is local
// to the leader and starts over at each election: a new leader gives every
// member one failure timeout before calling it failed, so a leader change
// alone never moves work.
type healthTracker struct {
	timeout time.Duration

	mu       sync.Mutex
	since    time.Time            // when this node started tracking (became leader)
	lastOK   map[string]time.Time // last successful health check
	infos    map[string]InfoResponse
	tracking bool
}

func newHealthTracker(timeout time.Duration) *healthTracker {
	return &healthTracker{timeout: timeout, lastOK: map[string]time.Time{}, infos: map[string]InfoResponse{}}
}

func (h *healthTracker) start(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.tracking {
		h.tracking, h.since = true, now
		clear(h.lastOK)
		clear(h.infos)
	}
}

func (h *healthTracker) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tracking = false
}

func (h *healthTracker) ok(id string, info InfoResponse, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastOK[id] = now
	h.infos[id] = info
}

func (h *healthTracker) forget(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.lastOK, id)
	delete(h.infos, id)
}

// unreachableFor returns how long a member has not answered, counting from
// when tracking started for members never heard from.
func (h *healthTracker) unreachableFor(id string, now time.Time) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	last, ok := h.lastOK[id]
	if !ok {
		last = h.since
	}
	return now.Sub(last)
}

func (h *healthTracker) healthy(id string, now time.Time) bool {
	return h.unreachableFor(id, now) < h.timeout
}

// MemberHealth is a member as the leader sees it.
type MemberHealth struct {
	ID       string
	Voter    bool
	Leader   bool
	Healthy  bool
	Draining bool
	Zone     string
	Version  string
	Applied  uint64
	// Unreachable is how long the member has not answered (0 if it has).
	Unreachable time.Duration
}

// Members returns every member of the Raft configuration with its health
// as this node judges it. Only the leader checks health; on other nodes
// Healthy is true for all members the replicated membership knows.
func (n *Node) Members() []MemberHealth {
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	now := time.Now()
	_, leader := n.raft.LeaderWithID()
	isLeader := n.IsLeader()
	var nodes map[string]fsm.Member
	n.fsm.Read(func(s *fsm.State) {
		nodes = map[string]fsm.Member{}
		for id, m := range s.Nodes {
			nodes[id] = *m
		}
	})
	var out []MemberHealth
	for _, s := range f.Configuration().Servers {
		id := string(s.ID)
		m := nodes[id]
		mh := MemberHealth{ID: id, Voter: s.Suffrage == raft.Voter, Leader: s.ID == leader, Zone: m.Zone(), Version: m.Version, Draining: m.Draining, Healthy: true}
		if isLeader && id != n.cfg.ID {
			mh.Unreachable = n.health.unreachableFor(id, now)
			mh.Healthy = mh.Unreachable < n.cfg.FailureTimeout
			if mh.Healthy {
				mh.Unreachable = 0
			}
		}
		n.health.mu.Lock()
		mh.Applied = n.health.infos[id].Applied
		n.health.mu.Unlock()
		if id == n.cfg.ID {
			mh.Applied = n.raft.AppliedIndex()
		}
		out = append(out, mh)
	}
	slices.SortFunc(out, func(a, b MemberHealth) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// LeaderSince returns when this node started acting as leader (zero when
// it is not the leader or has not noticed yet).
func (n *Node) LeaderSince() time.Time {
	n.health.mu.Lock()
	defer n.health.mu.Unlock()
	if !n.health.tracking {
		return time.Time{}
	}
	return n.health.since
}

// Live returns the members that may take work: registered, not draining,
// and (on the leader) answering health checks.
func (n *Node) Live() []string {
	now := time.Now()
	isLeader := n.IsLeader()
	var out []string
	n.fsm.Read(func(s *fsm.State) {
		for id, m := range s.Nodes {
			if m.Draining {
				continue
			}
			if isLeader && id != n.cfg.ID && !n.health.healthy(id, now) {
				continue
			}
			out = append(out, id)
		}
	})
	slices.Sort(out)
	return out
}

// Loads returns the fetch throughput per partition ("topic/N" -> bytes/s)
// that members reported in their last health check, this node's included.
func (n *Node) Loads() map[string]float64 {
	out := map[string]float64{}
	n.health.mu.Lock()
	for _, info := range n.health.infos {
		maps.Copy(out, info.Load)
	}
	n.health.mu.Unlock()
	if n.cfg.Load != nil {
		maps.Copy(out, n.cfg.Load())
	}
	return out
}

// autopilot runs on every node and acts while it leads: it checks members'
// health every second, keeps the number of voters at the largest odd number
// not above MaxVoters that the healthy members allow, replaces failed voters
// by healthy non-voters, and removes members unreachable for longer than
// DeadServerTimeout.
func (n *Node) autopilot() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-tick.C:
		}
		n.ensureRegistered()
		if !n.IsLeader() {
			n.health.stop()
			continue
		}
		n.health.start(time.Now())
		n.checkHealth()
		n.reconcileVoters()
	}
}

func (n *Node) checkHealth() {
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return
	}
	var wg sync.WaitGroup
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
			if err := n.clients.call(ctx, addr, "Info", &InfoRequest{}, &info); err == nil && info.ID == id {
				n.health.ok(id, info, time.Now())
			}
		}()
	}
	wg.Wait()
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

func (n *Node) reconcileVoters() {
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
		case ok && n.caughtUp(string(s.ID)):
			healthyNonvoters = append(healthyNonvoters, s)
		}
	}
	want := desiredVoters(healthy, n.cfg.MaxVoters)
	switch {
	case len(failedVoters) > 0 && len(healthyNonvoters) > 0:
		// Replace a failed voter: add the replacement first so the
		// group never has fewer healthy voters than before.
		p := n.pickNonvoter(healthyNonvoters, healthyVoters)
		if err := n.raft.AddVoter(p.ID, p.Address, 0, 10*time.Second).Error(); err != nil {
			n.log.Warn("promoting member", "member", p.ID, "err", err)
			return
		}
		n.log.Info("promoted member to voter", "member", p.ID, "replacing", failedVoters[0].ID)
		if err := n.raft.DemoteVoter(failedVoters[0].ID, 0, 10*time.Second).Error(); err != nil {
			n.log.Warn("demoting failed voter", "member", failedVoters[0].ID, "err", err)
		}
	case len(healthyVoters) < want && len(voters) < n.cfg.MaxVoters && len(healthyNonvoters) > 0:
		p := n.pickNonvoter(healthyNonvoters, healthyVoters)
		if err := n.raft.AddVoter(p.ID, p.Address, 0, 10*time.Second).Error(); err != nil {
			n.log.Warn("promoting member", "member", p.ID, "err", err)
			return
		}
		n.log.Info("promoted member to voter", "member", p.ID, "voters", len(voters)+1)
	case len(voters) > n.cfg.MaxVoters:
		// More voters than allowed (max lowered, or replacements added
		// while failed voters came back): demote a failed one first, else
		// the last healthy one that is not the leader.
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
		n.log.Info("demoted voter", "member", d.ID, "voters", len(voters)-1)
	}
}

// caughtUp: a non-voter is promoted only once its log is close to the
// leader's, so that promoting it does not stall commits.
func (n *Node) caughtUp(id string) bool {
	n.health.mu.Lock()
	info, ok := n.health.infos[id]
	n.health.mu.Unlock()
	return ok && info.Applied+1000 >= n.raft.AppliedIndex()
}

// pickNonvoter prefers a member in a zone that has no healthy voter yet, so
// voters spread across zones; then the lowest id.
func (n *Node) pickNonvoter(cands, voters []raft.Server) raft.Server {
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

// self is this node's membership record as it should be replicated.
func (n *Node) self() fsm.Member {
	m := fsm.Member{ID: n.cfg.ID, Addr: n.cfg.Advertise, RPC: n.cfg.RPCAdvertise, Admin: n.cfg.AdminAddr, Version: n.cfg.Version}
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
// restart). A draining mark is kept: only a record that differs otherwise is
// rewritten, and rewriting clears the mark, as a restarted node is no longer
// draining.
func (n *Node) ensureRegistered() {
	if !n.IsMember() {
		return
	}
	want := n.self()
	var cur *fsm.Member
	n.fsm.Read(func(s *fsm.State) {
		if m, ok := s.Nodes[n.cfg.ID]; ok {
			c := *m
			cur = &c
		}
	})
	if cur != nil && cur.Addr == want.Addr && cur.RPC == want.RPC && cur.Admin == want.Admin &&
		cur.Version == want.Version && cur.Zone() == want.Zone() && !(cur.Draining && !n.draining.Load()) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := n.Apply(ctx, fsm.RegisterNode{Node: want}); err != nil {
		n.log.Debug("registering this node", "err", err)
	}
}

// MarkDraining marks this node as draining in the replicated membership, so
// the assignment controller moves its partitions and committer roles away.
func (n *Node) MarkDraining(ctx context.Context) error {
	n.draining.Store(true)
	if _, err := n.Apply(ctx, fsm.DrainNode{ID: n.cfg.ID, Draining: true}); err != nil {
		return fmt.Errorf("marking node %s draining: %w", n.cfg.ID, err)
	}
	return nil
}
