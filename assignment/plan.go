package assignment

import (
	"cmp"
	"maps"
	"slices"

	"github.com/floe-io/floe/ledger"
)

// View is what Plan decides from.
type View struct {
	// Nodes are the live nodes that may take work.
	Nodes []string
	// Partitions are every partition that must be fetched.
	Partitions []ledger.TopicPartition
	// Tables are every table that needs a committer.
	Tables []string
	// Current partition and committer holders with their epochs.
	Current    map[ledger.TopicPartition]ledger.Assignment
	Committers map[string]ledger.Assignment
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
// holder is over its share (sticky), and gives each table a committer,
// keeping live committers and spreading new ones over the nodes with the
// fewest roles. Same view, same decision: it is deterministic.
func Plan(v View) Decision {
	d := Decision{Partitions: map[ledger.TopicPartition]ledger.Assignment{}, Committers: map[string]ledger.Assignment{}}
	nodes := slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(v.Nodes)))))
	if len(nodes) == 0 {
		return d
	}
	live := map[string]bool{}
	for _, n := range nodes {
		live[n] = true
	}
	parts := slices.Clone(v.Partitions)
	slices.SortFunc(parts, comparePartition)
	parts = slices.Compact(parts)

	base, extra := len(parts)/len(nodes), len(parts)%len(nodes)
	count := map[string]int{}
	owner := map[ledger.TopicPartition]string{}
	var free []ledger.TopicPartition
	// Keep live holders up to base+1 each.
	for _, tp := range parts {
		cur, ok := v.Current[tp]
		if ok && live[cur.Node] && count[cur.Node] < base+1 {
			owner[tp] = cur.Node
			count[cur.Node]++
		} else {
			free = append(free, tp)
		}
	}
	// At most `extra` nodes may hold base+1: release the surplus, last
	// partitions of the nodes that come last in order first.
	full := 0
	for _, n := range nodes {
		if count[n] == base+1 {
			full++
		}
	}
	for i := len(nodes) - 1; i >= 0 && full > extra; i-- {
		n := nodes[i]
		if count[n] != base+1 {
			continue
		}
		for j := len(parts) - 1; j >= 0; j-- {
			if owner[parts[j]] == n {
				delete(owner, parts[j])
				free = append(free, parts[j])
				count[n]--
				full--
				break
			}
		}
	}
	slices.SortFunc(free, comparePartition)
	for _, tp := range free {
		n := leastLoaded(nodes, count)
		owner[tp] = n
		count[n]++
	}
	for _, tp := range parts {
		cur, ok := v.Current[tp]
		if ok && cur.Node == owner[tp] {
			continue
		}
		d.Partitions[tp] = ledger.Assignment{Node: owner[tp], Epoch: cur.Epoch + 1}
	}

	roles := map[string]int{}
	tables := slices.Compact(slices.Sorted(slices.Values(v.Tables)))
	var orphaned []string
	for _, t := range tables {
		if cur, ok := v.Committers[t]; ok && live[cur.Node] {
			roles[cur.Node]++
		} else {
			orphaned = append(orphaned, t)
		}
	}
	for _, t := range orphaned {
		n := leastLoaded(nodes, roles)
		roles[n]++
		d.Committers[t] = ledger.Assignment{Node: n, Epoch: v.Committers[t].Epoch + 1}
	}
	return d
}

func leastLoaded(nodes []string, count map[string]int) string {
	best := nodes[0]
	for _, n := range nodes[1:] {
		if count[n] < count[best] {
			best = n
		}
	}
	return best
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
