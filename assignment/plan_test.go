package assignment

import (
	"maps"
	"math"
	"reflect"
	"testing"

	"github.com/floe-io/floe/internal/ledger"
)

const kib = 1 << 10

func TestPlanTable(t *testing.T) {
	cases := []struct {
		name      string
		nodes     []string
		parts     int
		current   assigns
		wantMoves int
	}{
		{"no nodes", nil, 4, nil, 0},
		{"single node takes all", []string{"a"}, 5, nil, 5},
		{"two nodes split", []string{"a", "b"}, 4, nil, 4},
		{"three nodes 24 partitions", []string{"a", "b", "c"}, 24, nil, 24},
		{"stable stays", []string{"a"}, 2, assigns{
			tps(2)[0]: {Node: "a", Epoch: 1}, tps(2)[1]: {Node: "a", Epoch: 1}}, 0},
		{"dead holder moves", []string{"b"}, 2, assigns{
			tps(2)[0]: {Node: "a", Epoch: 3}, tps(2)[1]: {Node: "b", Epoch: 1}}, 1},
		{"new node takes a share", []string{"a", "b"}, 4, assigns{
			tps(4)[0]: {Node: "a", Epoch: 1}, tps(4)[1]: {Node: "a", Epoch: 1}, tps(4)[2]: {Node: "a", Epoch: 1}, tps(4)[3]: {Node: "a", Epoch: 1}}, 2},
		{"join takes 6 of 24", []string{"a", "b", "c", "d"}, 24, roundRobin([]string{"a", "b", "c"}, tps(24)), 6},
		{"leave moves the leaver's 6", []string{"a", "b", "c"}, 24, roundRobin([]string{"a", "b", "c", "d"}, tps(24)), 6},
		{"balanced stays", []string{"a", "b", "c"}, 24, roundRobin([]string{"a", "b", "c"}, tps(24)), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := View{Nodes: c.nodes, Partitions: tps(c.parts), Current: c.current}
			d := Plan(v)
			if len(d.Partitions) != c.wantMoves {
				t.Fatalf("moves = %d, want %d: %+v", len(d.Partitions), c.wantMoves, d.Partitions)
			}
			if len(c.nodes) > 0 {
				checkPlaced(t, v, d)
			}
		})
	}
}

func TestPlanJoinMovesOnlyToNewcomer(t *testing.T) {
	v := View{Nodes: []string{"a", "b", "c", "d"}, Partitions: tps(24), Current: roundRobin([]string{"a", "b", "c"}, tps(24))}
	d := Plan(v)
	for p, a := range d.Partitions {
		if a.Node != "d" {
			t.Fatalf("%s moved from %s to %s, not to the newcomer", p, v.Current[p].Node, a.Node)
		}
	}
	if got := counts(checkPlaced(t, v, d), v.Partitions); got["a"] != 6 || got["b"] != 6 || got["c"] != 6 || got["d"] != 6 {
		t.Fatalf("counts %v", got)
	}
}

func TestPlanLeaveMovesOnlyTheLeavers(t *testing.T) {
	v := View{Nodes: []string{"a", "b", "c"}, Partitions: tps(24), Current: roundRobin([]string{"a", "b", "c", "d"}, tps(24))}
	d := Plan(v)
	for p := range d.Partitions {
		if v.Current[p].Node != "d" {
			t.Fatalf("%s moved away from live %s", p, v.Current[p].Node)
		}
	}
	checkPlaced(t, v, d)
}

// Nine nodes in three zones: without zones the first six nodes (zones a and
// b) would take a fresh topic's six partitions.
func TestPlanSpreadsTopicOverZones(t *testing.T) {
	nodes := []string{"a1", "a2", "a3", "b1", "b2", "b3", "c1", "c2", "c3"}
	zones := map[string]string{}
	for _, n := range nodes {
		zones[n] = n[:1]
	}
	v := View{Nodes: nodes, Partitions: topic("orders", 6), Zones: zones}
	after := checkPlaced(t, v, Plan(v))
	perZone := map[string]int{}
	for _, a := range after {
		perZone[zones[a.Node]]++
	}
	if perZone["a"] != 2 || perZone["b"] != 2 || perZone["c"] != 2 {
		t.Fatalf("per zone %v, want 2/2/2", perZone)
	}
	// One zone only: zones change nothing, ids decide.
	v.Zones = map[string]string{"a1": "a"}
	perZone = map[string]int{}
	for _, a := range checkPlaced(t, v, Plan(v)) {
		perZone[zones[a.Node]]++
	}
	if perZone["a"] != 3 || perZone["b"] != 3 {
		t.Fatalf("without zones per zone %v, want 3/3/0", perZone)
	}
}

func TestPlanCommitters(t *testing.T) {
	t.Run("zones break ties", func(t *testing.T) {
		v := View{Nodes: []string{"a1", "a2", "b1"}, Tables: []string{"x", "y"}, Zones: map[string]string{"a1": "a", "a2": "a", "b1": "b"}}
		d := Plan(v)
		if d.Committers["x"].Node != "a1" || d.Committers["y"].Node != "b1" {
			t.Fatalf("committers %v, want x on a1 and y on b1", d.Committers)
		}
		v.Zones = nil
		if d := Plan(v); d.Committers["y"].Node != "a2" {
			t.Fatalf("without zones %v, want y on a2", d.Committers)
		}
	})
	t.Run("live never moves, orphan bumps epoch", func(t *testing.T) {
		v := View{Nodes: []string{"a", "b"}, Tables: []string{"x", "y", "z"}, Committers: map[string]ledger.Assignment{
			"x": {Node: "a", Epoch: 4}, "y": {Node: "a", Epoch: 2}, "z": {Node: "gone", Epoch: 7}}}
		d := Plan(v)
		want := map[string]ledger.Assignment{"z": {Node: "b", Epoch: 8}}
		if !maps.Equal(d.Committers, want) {
			t.Fatalf("committers %v, want %v", d.Committers, want)
		}
	})
}

// hotView: three nodes with two partitions each; a carries 1.6 MiB/s, b
// 0.2 and c 0.9 (the mean), so one swap of a 0.8 with a 0.1 evens it out.
func hotView() View {
	parts := topic("t", 6)
	load := map[tp]float64{}
	for i, l := range []float64{800, 800, 100, 100, 500, 400} {
		load[parts[i]] = l * kib
	}
	return View{Nodes: []string{"a", "b", "c"}, Partitions: parts, Load: load, Current: assigns{
		parts[0]: {Node: "a", Epoch: 1}, parts[1]: {Node: "a", Epoch: 1},
		parts[2]: {Node: "b", Epoch: 1}, parts[3]: {Node: "b", Epoch: 1},
		parts[4]: {Node: "c", Epoch: 1}, parts[5]: {Node: "c", Epoch: 1},
	}}
}

func TestPlanHotPartitionSwapsOnce(t *testing.T) {
	v := hotView()
	d := Plan(v)
	want := assigns{v.Partitions[0]: {Node: "b", Epoch: 2}, v.Partitions[2]: {Node: "a", Epoch: 2}}
	if !maps.Equal(d.Partitions, want) {
		t.Fatalf("decision %v, want %v", d.Partitions, want)
	}
	after := checkPlaced(t, v, d)
	for n, l := range nodeLoads(after, v.Load) {
		if l != 900*kib {
			t.Fatalf("%s load %v after the swap, want 900 KiB/s", n, l)
		}
	}
	v.Current = after
	if again := Plan(v); !again.Empty() {
		t.Fatalf("second plan %v", again)
	}
	// Held back (the controller settling): nothing to place, nothing moves.
	if d := plan(hotView(), false); !d.Empty() {
		t.Fatalf("plan without swaps %v", d)
	}
}

func TestPlanLoadHysteresis(t *testing.T) {
	t.Run("small noise does not churn", func(t *testing.T) {
		nodes := []string{"a", "b", "c"}
		v := View{Nodes: nodes, Partitions: tps(24), Current: roundRobin(nodes, tps(24)), Load: map[tp]float64{}}
		for i, p := range v.Partitions {
			// 1 MiB/s ± up to 5%, a fixed pattern.
			v.Load[p] = 1024 * kib * (1 + 0.05*float64((i*7)%11-5)/5)
		}
		if d := Plan(v); !d.Empty() {
			t.Fatalf("noise moved %v", d.Partitions)
		}
	})
	t.Run("a large ratio on an idle cluster is noise", func(t *testing.T) {
		v := hotView()
		for p := range v.Load {
			v.Load[p] /= 100 // 16 KiB/s against 2 KiB/s
		}
		if d := Plan(v); !d.Empty() {
			t.Fatalf("idle cluster moved %v", d.Partitions)
		}
	})
	t.Run("missing loads count as the mean", func(t *testing.T) {
		v := hotView()
		delete(v.Load, v.Partitions[2])
		delete(v.Load, v.Partitions[3])
		// b now counts 2×625 KiB/s (the mean of the measured), so the
		// least loaded node is c, not b, and a swaps with c.
		want := assigns{v.Partitions[0]: {Node: "c", Epoch: 2}, v.Partitions[4]: {Node: "a", Epoch: 2}}
		if d := Plan(v); !maps.Equal(d.Partitions, want) {
			t.Fatalf("moved %v, want %v", d.Partitions, want)
		}
	})
}

// Two nodes, one carrying everything: four swaps per plan at most, and
// repeated plans converge.
func TestPlanBoundsSwaps(t *testing.T) {
	nodes := []string{"a", "b"}
	parts := topic("t", 20)
	v := View{Nodes: nodes, Partitions: parts, Current: roundRobin(nodes, parts), Load: map[tp]float64{}}
	for i, p := range parts {
		v.Load[p] = 0
		if i%2 == 0 {
			v.Load[p] = 100 * kib
		}
	}
	d := Plan(v)
	if len(d.Partitions) != 2*maxSwapsPerPlan {
		t.Fatalf("first plan moved %d, want %d", len(d.Partitions), 2*maxSwapsPerPlan)
	}
	v.Current = checkPlaced(t, v, d)
	d = Plan(v)
	if len(d.Partitions) != 2 {
		t.Fatalf("second plan moved %d, want one swap", len(d.Partitions))
	}
	v.Current = checkPlaced(t, v, d)
	if l := nodeLoads(v.Current, v.Load); l["a"] != l["b"] {
		t.Fatalf("loads %v", l)
	}
	if d := Plan(v); !d.Empty() {
		t.Fatalf("third plan %v", d)
	}
}

// NaN, negative and infinite measurements count as missing: one broken
// report must not pin or starve a node.
func TestPlanUnusableLoadsCountAsMissing(t *testing.T) {
	bad, missing := hotView(), hotView()
	bad.Load[bad.Partitions[2]] = math.NaN()
	bad.Load[bad.Partitions[3]] = math.Inf(1)
	bad.Load[bad.Partitions[5]] = -1
	for _, i := range []int{2, 3, 5} {
		delete(missing.Load, missing.Partitions[i])
	}
	if got, want := Plan(bad), Plan(missing); !reflect.DeepEqual(got, want) {
		t.Fatalf("with unusable loads %v, with missing ones %v", got, want)
	}
}
