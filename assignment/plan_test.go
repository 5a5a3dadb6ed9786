package assignment

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/floe-io/floe/ledger"
)

func tps(n int) []ledger.TopicPartition {
	var out []ledger.TopicPartition
	for i := range n {
		out = append(out, ledger.TopicPartition{Topic: fmt.Sprint("t", i%3), Partition: int32(i)})
	}
	return out
}

func TestPlanTable(t *testing.T) {
	cases := []struct {
		name      string
		nodes     []string
		parts     int
		current   map[ledger.TopicPartition]ledger.Assignment
		wantMoves int
	}{
		{"no nodes", nil, 4, nil, 0},
		{"single node takes all", []string{"a"}, 5, nil, 5},
		{"two nodes split", []string{"a", "b"}, 4, nil, 4},
		{"stable stays", []string{"a"}, 2, map[ledger.TopicPartition]ledger.Assignment{
			tps(2)[0]: {Node: "a", Epoch: 1}, tps(2)[1]: {Node: "a", Epoch: 1}}, 0},
		{"dead holder moves", []string{"b"}, 2, map[ledger.TopicPartition]ledger.Assignment{
			tps(2)[0]: {Node: "a", Epoch: 3}, tps(2)[1]: {Node: "b", Epoch: 1}}, 1},
		{"new node takes a share", []string{"a", "b"}, 4, map[ledger.TopicPartition]ledger.Assignment{
			tps(4)[0]: {Node: "a", Epoch: 1}, tps(4)[1]: {Node: "a", Epoch: 1}, tps(4)[2]: {Node: "a", Epoch: 1}, tps(4)[3]: {Node: "a", Epoch: 1}}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Plan(View{Nodes: c.nodes, Partitions: tps(c.parts), Current: c.current})
			if len(d.Partitions) != c.wantMoves {
				t.Fatalf("moves = %d, want %d: %+v", len(d.Partitions), c.wantMoves, d.Partitions)
			}
			for tp, a := range d.Partitions {
				if a.Epoch != c.current[tp].Epoch+1 {
					t.Fatalf("%s epoch %d, previous %d", tp, a.Epoch, c.current[tp].Epoch)
				}
			}
		})
	}
}

// TestPlanProperties: every partition assigned exactly once to a live node,
// counts within one of each other, deterministic, and a second plan on the
// result moves nothing (stickiness); after removing a node only its
// partitions and the surplus needed for balance move.
func TestPlanProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		all := []string{"a", "b", "c", "d", "e"}
		nodes := rapid.SliceOfNDistinct(rapid.SampledFrom(all), 1, 5, rapid.ID[string]).Draw(t, "nodes")
		parts := tps(rapid.IntRange(0, 40).Draw(t, "parts"))
		cur := map[ledger.TopicPartition]ledger.Assignment{}
		for _, tp := range parts {
			if rapid.Bool().Draw(t, "assigned") {
				cur[tp] = ledger.Assignment{Node: rapid.SampledFrom(all).Draw(t, "holder"), Epoch: uint64(rapid.IntRange(1, 9).Draw(t, "epoch"))}
			}
		}
		v := View{Nodes: nodes, Partitions: parts, Current: cur, Tables: []string{"x", "y", "z"}}
		d := Plan(v)
		if fmt.Sprint(d) != fmt.Sprint(Plan(v)) {
			t.Fatal("plan is not deterministic")
		}
		after := Apply(cur, d)
		live := map[string]bool{}
		for _, n := range nodes {
			live[n] = true
		}
		count := map[string]int{}
		for _, tp := range parts {
			a, ok := after[tp]
			if !ok || !live[a.Node] {
				t.Fatalf("%s assigned to %+v (live %v)", tp, a, nodes)
			}
			count[a.Node]++
		}
		lo, hi := len(parts), 0
		for _, n := range nodes {
			lo, hi = min(lo, count[n]), max(hi, count[n])
		}
		if len(parts) > 0 && hi-lo > 1 {
			t.Fatalf("unbalanced: %v", count)
		}
		// Partitions already on a live node under its share do not move.
		for tp, a := range d.Partitions {
			if c, ok := cur[tp]; ok && live[c.Node] && count[c.Node] < len(parts)/len(nodes) {
				t.Fatalf("%s moved from %s (now %d, share %d) to %s", tp, c.Node, count[c.Node], len(parts)/len(nodes), a.Node)
			}
		}
		if again := Plan(View{Nodes: nodes, Partitions: parts, Current: after, Tables: v.Tables, Committers: d.Committers}); !again.Empty() {
			t.Fatalf("second plan moved %+v", again)
		}
		roles := map[string]int{}
		for _, a := range d.Committers {
			if !live[a.Node] {
				t.Fatalf("committer on dead node %s", a.Node)
			}
			roles[a.Node]++
		}
		if len(d.Committers) != 3 {
			t.Fatalf("committers = %v", d.Committers)
		}
	})
}
