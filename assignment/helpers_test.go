package assignment

import (
	"fmt"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/floe-io/floe/internal/ledger"
)

// The controller tests start goroutines; none may outlive them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type tp = ledger.TopicPartition

type assigns = map[ledger.TopicPartition]ledger.Assignment

// tps returns n partitions spread over three topics.
func tps(n int) []tp {
	var out []tp
	for i := range n {
		out = append(out, tp{Topic: fmt.Sprint("t", i%3), Partition: int32(i)})
	}
	return out
}

// topic returns n partitions of one topic.
func topic(name string, n int) []tp {
	var out []tp
	for i := range n {
		out = append(out, tp{Topic: name, Partition: int32(i)})
	}
	return out
}

// roundRobin holds parts on nodes in turn, at epoch 1: a balanced layout.
func roundRobin(nodes []string, parts []tp) assigns {
	out := assigns{}
	for i, p := range parts {
		out[p] = ledger.Assignment{Node: nodes[i%len(nodes)], Epoch: 1}
	}
	return out
}

// fatalf is what testing.T and rapid.T share.
type fatalf interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkPlaced fails unless, after d, every partition of v has exactly one
// holder among v.Nodes, counts differ by at most one, every move bumps the
// epoch and every table has a live committer. It returns the layout after d.
func checkPlaced(t fatalf, v View, d Decision) assigns {
	t.Helper()
	after := Apply(v.Current, d)
	count := map[string]int{}
	for _, p := range v.Partitions {
		a, ok := after[p]
		if !ok || !slices.Contains(v.Nodes, a.Node) {
			t.Fatalf("%s assigned to %+v (nodes %v)", p, a, v.Nodes)
		}
		count[a.Node]++
	}
	for p, a := range d.Partitions {
		if !slices.Contains(v.Partitions, p) {
			t.Fatalf("decision assigns unknown partition %s", p)
		}
		if a.Epoch != v.Current[p].Epoch+1 {
			t.Fatalf("%s epoch %d, previous %d", p, a.Epoch, v.Current[p].Epoch)
		}
	}
	if len(v.Nodes) > 0 && len(v.Partitions) > 0 {
		lo, hi := len(v.Partitions), 0
		for _, n := range v.Nodes {
			lo, hi = min(lo, count[n]), max(hi, count[n])
		}
		if hi-lo > 1 {
			t.Fatalf("unbalanced: %v", count)
		}
	}
	for _, table := range v.Tables {
		a, ok := d.Committers[table]
		if !ok {
			a = v.Committers[table]
		}
		if len(v.Nodes) > 0 && !slices.Contains(v.Nodes, a.Node) {
			t.Fatalf("table %s committer %+v (nodes %v)", table, a, v.Nodes)
		}
	}
	return after
}

// counts returns partitions per node in a layout.
func counts(cur assigns, parts []tp) map[string]int {
	out := map[string]int{}
	for _, p := range parts {
		out[cur[p].Node]++
	}
	return out
}

// nodeLoads returns the load per node in a layout.
func nodeLoads(cur assigns, load map[tp]float64) map[string]float64 {
	out := map[string]float64{}
	for p, a := range cur {
		out[a.Node] += load[p]
	}
	return out
}
