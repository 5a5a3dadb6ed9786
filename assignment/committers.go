package assignment

import (
	"slices"

	"github.com/floe-io/floe/internal/ledger"
)

// placeCommitters returns the new committer roles: one per table. A live
// committer is never moved, even when roles are unbalanced, because moving
// one fences its in-flight commit; only tables whose committer is gone (or
// never was) get one, on the node with the fewest roles, then the zone with
// the fewest roles, then the first id. The epoch grows past the previous
// holder's so the ledger fences it.
func placeCommitters(nodes []string, zones *zoneIndex, tables []string, current map[string]ledger.Assignment) map[string]ledger.Assignment {
	live := map[string]bool{}
	for _, n := range nodes {
		live[n] = true
	}
	roles, zoneRoles := map[string]int{}, map[string]int{}
	var orphaned []string
	for _, t := range slices.Compact(slices.Sorted(slices.Values(tables))) {
		if cur, ok := current[t]; ok && live[cur.Node] {
			roles[cur.Node]++
			zoneRoles[zones.zoneOf(cur.Node)]++
		} else {
			orphaned = append(orphaned, t)
		}
	}
	out := map[string]ledger.Assignment{}
	for _, t := range orphaned {
		best := nodes[0]
		for _, n := range nodes[1:] {
			if roles[n] < roles[best] || (roles[n] == roles[best] && zoneRoles[zones.zoneOf(n)] < zoneRoles[zones.zoneOf(best)]) {
				best = n
			}
		}
		roles[best]++
		zoneRoles[zones.zoneOf(best)]++
		out[t] = ledger.Assignment{Node: best, Epoch: current[t].Epoch + 1}
	}
	return out
}
