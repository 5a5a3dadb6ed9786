package assignment

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/floe-io/floe/internal/ledger"
)

var pool = []string{"a", "b", "c", "d", "e", "f"}

// drawView draws nodes, partitions over a few topics, a partial current
// layout (some holders dead), committers, and optionally zones and loads.
func drawView(t *rapid.T, loads bool) View {
	nodes := rapid.SliceOfNDistinct(rapid.SampledFrom(pool), 1, len(pool), rapid.ID[string]).Draw(t, "nodes")
	parts := drawParts(t)
	cur := assigns{}
	for _, p := range parts {
		if rapid.Bool().Draw(t, "assigned") {
			cur[p] = ledger.Assignment{Node: rapid.SampledFrom(append(slices.Clone(pool), "gone")).Draw(t, "holder"), Epoch: uint64(rapid.IntRange(1, 9).Draw(t, "epoch"))}
		}
	}
	tables := []string{"x", "y", "z"}
	committers := map[string]ledger.Assignment{}
	for _, table := range tables {
		if rapid.Bool().Draw(t, "has committer") {
			committers[table] = ledger.Assignment{Node: rapid.SampledFrom(pool).Draw(t, "committer"), Epoch: uint64(rapid.IntRange(1, 9).Draw(t, "committer epoch"))}
		}
	}
	v := View{Nodes: nodes, Partitions: parts, Tables: tables, Current: cur, Committers: committers}
	if rapid.Bool().Draw(t, "zoned") {
		v.Zones = map[string]string{}
		for _, n := range pool {
			v.Zones[n] = rapid.SampledFrom([]string{"", "z1", "z2", "z3"}).Draw(t, "zone")
		}
	}
	if loads {
		v.Load = map[tp]float64{}
		for _, p := range parts {
			if rapid.IntRange(0, 9).Draw(t, "measured") > 0 {
				v.Load[p] = float64(rapid.IntRange(0, 4096).Draw(t, "load")) * kib
			}
		}
	}
	return v
}

func drawParts(t *rapid.T) []tp {
	var parts []tp
	for i := range rapid.IntRange(0, 4).Draw(t, "topics") {
		parts = append(parts, topic(fmt.Sprint("t", i), rapid.IntRange(0, 16).Draw(t, "partitions"))...)
	}
	return parts
}

// Every partition lands on exactly one live node, counts within one, moves
// bump epochs, tables get live committers; with or without loads.
func TestPropertyPlaced(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := drawView(t, rapid.Bool().Draw(t, "loads"))
		d := Plan(v)
		checkPlaced(t, v, d)
		for p, a := range d.Partitions {
			if c, ok := v.Current[p]; ok && c.Node == a.Node {
				t.Fatalf("%s in the decision but unchanged on %s", p, a.Node)
			}
		}
		for table, a := range d.Committers {
			if c, ok := v.Committers[table]; ok && slices.Contains(v.Nodes, c.Node) {
				t.Fatalf("live committer of %s moved from %s to %s", table, c.Node, a.Node)
			}
		}
		// Load swaps add at most maxSwapsPerPlan pairs of moves to what
		// placement alone decides.
		held := plan(v, false)
		diff := 0
		for _, p := range v.Partitions {
			if Apply(v.Current, d)[p].Node != Apply(v.Current, held)[p].Node {
				diff++
			}
		}
		if diff > 2*maxSwapsPerPlan {
			t.Fatalf("swaps moved %d partitions", diff)
		}
	})
}

// Same view, same decision, whatever the order of the input slices.
func TestPropertyDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := drawView(t, rapid.Bool().Draw(t, "loads"))
		d := Plan(v)
		if !reflect.DeepEqual(d, Plan(v)) {
			t.Fatal("two plans of one view differ")
		}
		w := v
		w.Nodes = rapid.Permutation(v.Nodes).Draw(t, "nodes order")
		w.Partitions = rapid.Permutation(v.Partitions).Draw(t, "partitions order")
		w.Tables = rapid.Permutation(v.Tables).Draw(t, "tables order")
		w.Current = maps.Clone(v.Current) // a fresh map iterates differently
		if got := Plan(w); !reflect.DeepEqual(d, got) {
			t.Fatalf("permuted inputs changed the plan:\n%v\n%v", d, got)
		}
	})
}

// settled draws a view without loads and returns it after one plan: counts
// balanced, every partition and table held by a live node, in an arbitrary
// layout.
func settled(t *rapid.T) View {
	v := drawView(t, false)
	d := Plan(v)
	v.Current = Apply(v.Current, d)
	maps.Copy(v.Committers, d.Committers)
	return v
}

// Without loads a second plan changes nothing.
func TestPropertyStable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := settled(t)
		if d := Plan(v); !d.Empty() {
			t.Fatalf("second plan %+v", d)
		}
	})
}

// With loads, repeated plans converge: each swap strictly lowers the sum of
// squared node loads, so the assignment cannot cycle.
func TestPropertyConverges(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := drawView(t, true)
		for range 100 {
			d := Plan(v)
			v.Current = checkPlaced(t, v, d)
			maps.Copy(v.Committers, d.Committers)
			if d.Empty() {
				return
			}
		}
		t.Fatal("plans did not converge in 100 rounds")
	})
}

// A join moves only partitions to the newcomer, and no more than its share.
func TestPropertyJoinIsSticky(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := settled(t)
		var joiners []string
		for _, n := range pool {
			if !slices.Contains(v.Nodes, n) {
				joiners = append(joiners, n)
			}
		}
		if len(joiners) == 0 {
			t.Skip("every node already in")
		}
		joiner := rapid.SampledFrom(joiners).Draw(t, "joiner")
		v.Nodes = append(v.Nodes, joiner)
		d := Plan(v)
		after := checkPlaced(t, v, d)
		for p, a := range d.Partitions {
			if a.Node != joiner {
				t.Fatalf("%s moved from %s to %s, not to the joiner", p, v.Current[p].Node, a.Node)
			}
		}
		share := (len(v.Partitions) + len(v.Nodes) - 1) / len(v.Nodes)
		if got := counts(after, v.Partitions)[joiner]; len(d.Partitions) != got || got > share {
			t.Fatalf("moved %d, joiner holds %d, share %d", len(d.Partitions), got, share)
		}
		if len(d.Committers) != 0 {
			t.Fatalf("join moved committers %v", d.Committers)
		}
	})
}

// A leave moves exactly the leaver's partitions and committer roles.
func TestPropertyLeaveIsSticky(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := settled(t)
		if len(v.Nodes) < 2 {
			t.Skip("nobody left to take over")
		}
		leaver := rapid.SampledFrom(v.Nodes).Draw(t, "leaver")
		held := counts(v.Current, v.Partitions)[leaver]
		v.Nodes = slices.DeleteFunc(slices.Clone(v.Nodes), func(n string) bool { return n == leaver })
		d := Plan(v)
		checkPlaced(t, v, d)
		if len(d.Partitions) != held {
			t.Fatalf("moved %d, leaver held %d", len(d.Partitions), held)
		}
		for p := range d.Partitions {
			if v.Current[p].Node != leaver {
				t.Fatalf("%s moved away from live %s", p, v.Current[p].Node)
			}
		}
		for table := range d.Committers {
			if v.Committers[table].Node != leaver {
				t.Fatalf("committer of %s moved away from live %s", table, v.Committers[table].Node)
			}
		}
	})
}

// One fresh topic over zones of equal size: zones hold its partitions
// within one of each other.
func TestPropertyZonesSpreadTopic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		zoneCount := rapid.IntRange(2, 3).Draw(t, "zones")
		perZone := rapid.IntRange(1, 3).Draw(t, "nodes per zone")
		var labels []string
		for i := range zoneCount * perZone {
			labels = append(labels, fmt.Sprint("z", i%zoneCount))
		}
		// A drawn order, so id order alone would not spread the topic.
		labels = rapid.Permutation(labels).Draw(t, "zone order")
		v := View{Zones: map[string]string{}}
		sizes := map[string]int{}
		for i, z := range labels {
			n := fmt.Sprintf("n%02d", i)
			v.Nodes = append(v.Nodes, n)
			v.Zones[n] = z
			sizes[z]++
		}
		v.Partitions = topic("t", rapid.IntRange(0, 30).Draw(t, "partitions"))
		spread := map[string]int{}
		for _, a := range checkPlaced(t, v, Plan(v)) {
			spread[v.Zones[a.Node]]++
		}
		lo, hi := len(v.Partitions), 0
		for z := range sizes {
			lo, hi = min(lo, spread[z]), max(hi, spread[z])
		}
		if hi-lo > 1 {
			t.Fatalf("per zone %v", spread)
		}
	})
}
