package assignment

import (
	"cmp"
	"maps"
	"slices"

	"github.com/floe-io/floe/internal/ledger"
)

// View is what Plan decides from.
type View struct {
	// Nodes are the live nodes that may take work (the caller already
	// leaves out dead and draining nodes).
	Nodes []string
	// Partitions are every partition that must be fetched.
	Partitions []ledger.TopicPartition
	// Tables are every table that needs a committer.
	Tables []string
	// Current partition and committer holders with their epochs.
	Current    map[ledger.TopicPartition]ledger.Assignment
	Committers map[string]ledger.Assignment
	// Zones maps a node to its zone; nodes without a zone are missing or "".
	Zones map[string]string
	// Load is the measured throughput of each partition in bytes per second;
	// missing partitions count as the mean load of the measured ones (0 if none).
	Load map[ledger.TopicPartition]float64
}

// Decision is what changes: only moved or new assignments, with new epochs.
type Decision struct {
	Partitions map[ledger.TopicPartition]ledger.Assignment
	Committers map[string]ledger.Assignment
}

// Empty reports whether the decision changes nothing.
func (d Decision) Empty() bool { return len(d.Partitions) == 0 && len(d.Committers) == 0 }

// Plan spreads partitions over nodes so that counts differ by at most one,
// keeping every partition whose holder is live where it is unless that
// holder is over its share (sticky). Free partitions go to the least loaded
// node with room, spreading a topic over zones among equal candidates; then
// at most maxSwapsPerPlan load swaps even out throughput (load.go). Each
// table gets a committer, keeping live committers and spreading new ones
// over the nodes with the fewest roles (committers.go). Same view, same
// decision: it is deterministic.
func Plan(v View) Decision { return plan(v, true) }

// plan is Plan with the load swaps optional: the controller holds them back
// while it settles, but placing what has no live holder never waits.
func plan(v View, swaps bool) Decision {
	d := Decision{Partitions: map[ledger.TopicPartition]ledger.Assignment{}, Committers: map[string]ledger.Assignment{}}
	// Sorting every input first is what makes Plan independent of the
	// order of the slices and of map iteration.
	nodes := slices.Compact(slices.Sorted(slices.Values(v.Nodes)))
	if len(nodes) == 0 {
		return d
	}
	parts := slices.Clone(v.Partitions)
	slices.SortFunc(parts, comparePartition)
	parts = slices.Compact(parts)

	zones := newZoneIndex(nodes, v.Zones)
	p := newPlacement(nodes, parts, v.Current, partitionLoads(parts, v.Load), zones)
	p.keep()
	p.trim()
	p.placeFree()
	if swaps {
		p.rebalance(maxSwapsPerPlan)
	}
	for _, tp := range parts {
		cur, ok := v.Current[tp]
		if ok && cur.Node == p.owner[tp] {
			continue
		}
		d.Partitions[tp] = ledger.Assignment{Node: p.owner[tp], Epoch: cur.Epoch + 1}
	}
	d.Committers = placeCommitters(nodes, zones, v.Tables, v.Committers)
	return d
}

// placement is the partition assignment under construction. The count rule
// is the hard one: with base = P/N and extra = P%N, exactly extra nodes end
// with base+1 partitions and the others with base.
type placement struct {
	nodes   []string
	parts   []ledger.TopicPartition // sorted
	current map[ledger.TopicPartition]ledger.Assignment
	loads   map[ledger.TopicPartition]float64 // per partition, missing ones filled in
	zones   *zoneIndex

	base, extra int
	full        int // nodes holding base+1
	live        map[string]bool
	count       map[string]int
	nodeLoad    map[string]float64
	owner       map[ledger.TopicPartition]string
	free        []ledger.TopicPartition
}

func newPlacement(nodes []string, parts []ledger.TopicPartition, current map[ledger.TopicPartition]ledger.Assignment, loads map[ledger.TopicPartition]float64, zones *zoneIndex) *placement {
	p := &placement{
		nodes: nodes, parts: parts, current: current, loads: loads, zones: zones,
		base: len(parts) / len(nodes), extra: len(parts) % len(nodes),
		live: map[string]bool{}, count: map[string]int{}, nodeLoad: map[string]float64{},
		owner: map[ledger.TopicPartition]string{},
	}
	for _, n := range nodes {
		p.live[n] = true
	}
	return p
}

func (p *placement) assign(tp ledger.TopicPartition, n string) {
	p.owner[tp] = n
	p.count[n]++
	p.nodeLoad[n] += p.loads[tp]
	p.zones.add(tp.Topic, n, 1)
	if p.count[n] == p.base+1 {
		p.full++
	}
}

func (p *placement) release(tp ledger.TopicPartition) {
	n := p.owner[tp]
	if p.count[n] == p.base+1 {
		p.full--
	}
	delete(p.owner, tp)
	p.count[n]--
	p.nodeLoad[n] -= p.loads[tp]
	p.zones.add(tp.Topic, n, -1)
}

// keep leaves each partition with its live holder, up to base+1 per node.
func (p *placement) keep() {
	for _, tp := range p.parts {
		if cur, ok := p.current[tp]; ok && p.live[cur.Node] && p.count[cur.Node] < p.base+1 {
			p.assign(tp, cur.Node)
		} else {
			p.free = append(p.free, tp)
		}
	}
}

// trim releases one partition from nodes at base+1 until only extra of
// them are: the most loaded full node gives first (later ids first on a
// tie, as before loads existed), and it gives its last partition, so the
// choice of what moves does not depend on noisy measurements.
func (p *placement) trim() {
	for p.full > p.extra {
		var from string
		for _, n := range slices.Backward(p.nodes) {
			if p.count[n] == p.base+1 && (from == "" || p.nodeLoad[n] > p.nodeLoad[from]) {
				from = n
			}
		}
		for _, tp := range slices.Backward(p.parts) {
			if p.owner[tp] == from {
				p.release(tp)
				p.free = append(p.free, tp)
				break
			}
		}
	}
}

// hasRoom reports whether n may take one more partition under the count
// rule. Because at most extra nodes are full, some node always has room
// while partitions are free.
func (p *placement) hasRoom(n string) bool {
	return p.count[n] < p.base || (p.count[n] == p.base && p.full < p.extra)
}

// placeFree gives each free partition, heaviest first (so the big ones land
// while there is still freedom to balance around them), to the best node
// with room.
func (p *placement) placeFree() {
	slices.SortFunc(p.free, func(a, b ledger.TopicPartition) int {
		if c := cmp.Compare(p.loads[b], p.loads[a]); c != 0 {
			return c
		}
		return comparePartition(a, b)
	})
	for _, tp := range p.free {
		best := ""
		for _, n := range p.nodes {
			if p.hasRoom(n) && (best == "" || p.better(tp.Topic, n, best)) {
				best = n
			}
		}
		p.assign(tp, best)
	}
	p.free = nil
}

// better reports whether a should take a partition of topic rather than b:
// least load, then fewest partitions, then the zone holding the fewest
// partitions of the topic. Otherwise the earlier id, which the caller gets
// by scanning nodes in order.
func (p *placement) better(topic, a, b string) bool {
	if la, lb := p.nodeLoad[a], p.nodeLoad[b]; la != lb {
		return la < lb
	}
	if ca, cb := p.count[a], p.count[b]; ca != cb {
		return ca < cb
	}
	return p.zones.topicCount(topic, a) < p.zones.topicCount(topic, b)
}

func comparePartition(a, b ledger.TopicPartition) int {
	if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// Apply returns the assignments after a decision, for tests and simulation.
func Apply(cur map[ledger.TopicPartition]ledger.Assignment, d Decision) map[ledger.TopicPartition]ledger.Assignment {
	out := maps.Clone(cur)
	if out == nil {
		out = map[ledger.TopicPartition]ledger.Assignment{}
	}
	maps.Copy(out, d.Partitions)
	return out
}
