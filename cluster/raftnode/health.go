package raftnode

import (
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
	// clockOffset is each member's clock less the group's median at the
	// last round; clockOffSince when it went past maxClockOffset
	// (clockskew.go).
	clockOffset   map[string]time.Duration
	clockOffSince map[string]time.Time
}

func newHealthTracker(timeout time.Duration) *healthTracker {
	return &healthTracker{timeout: timeout, lastOK: map[string]time.Time{}, infos: map[string]InfoResponse{},
		clockOffset: map[string]time.Duration{}, clockOffSince: map[string]time.Time{}}
}

func (h *healthTracker) start(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.tracking {
		h.tracking, h.since = true, now
		clear(h.lastOK)
		clear(h.infos)
		clear(h.clockOffset)
		clear(h.clockOffSince)
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
	delete(h.clockOffset, id)
	delete(h.clockOffSince, id)
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

// halted reports whether the member said in its last health check that its
// FSM is halted or that it cannot write its Raft log: either way it acts
// on a state that does not move.
func (h *healthTracker) halted(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.infos[id].Halted || h.infos[id].StorageFailing
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
	// UpgradeRequired: the member's FSM is halted (fsm.Halt), as it told
	// the leader, or this node itself.
	UpgradeRequired bool
	// StorageFailing: the member cannot write its Raft log (storewatch.go).
	StorageFailing bool
	// ClockSkewed: the member's clock has been more than maxClockOffset off
	// the group's median for clockSkewFor (clockskew.go); ClockOffset is
	// how far off it was at the leader's last reading. Leader only.
	ClockSkewed bool
	ClockOffset time.Duration
	Zone        string
	Version     string
	Applied     uint64
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
		mh.Applied, mh.UpgradeRequired = n.health.infos[id].Applied, n.health.infos[id].Halted
		mh.StorageFailing = n.health.infos[id].StorageFailing
		n.health.mu.Unlock()
		if isLeader {
			mh.ClockSkewed, mh.ClockOffset = n.health.clockSkewed(id, now)
		}
		if id == n.cfg.ID {
			mh.Applied = n.raft.AppliedIndex()
			_, mh.UpgradeRequired = n.fsm.Halted()
			mh.StorageFailing = n.StorageProblem() != ""
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
// and (on the leader) answering health checks, not halted (upgrade
// required, or unable to write the Raft log: such a node acts on a state
// that does not move) and with a clock that agrees with the group's
// (clockskew.go).
func (n *Node) Live() []string {
	now := time.Now()
	isLeader := n.IsLeader()
	_, selfHalted := n.fsm.Halted()
	selfHalted = selfHalted || n.StorageProblem() != ""
	var out []string
	n.fsm.Read(func(s *fsm.State) {
		for id, m := range s.Nodes {
			if m.Draining || id == n.cfg.ID && selfHalted {
				continue
			}
			if isLeader && id != n.cfg.ID && (!n.health.healthy(id, now) || n.health.halted(id)) {
				continue
			}
			if skewed, _ := n.health.clockSkewed(id, now); isLeader && skewed {
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
