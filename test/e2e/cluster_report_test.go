package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestClusterReportSameOnEveryNode: three nodes share a table's partitions.
// Each node's own report counts its share of the records consumed; the
// cluster-wide report (GET /v1/status?scope=cluster, the console) counts
// them all, the same on whichever node builds it.
func TestClusterReportSameOnEveryNode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(6, "cfg_topic")})
	nodes := startAPITrio(t, kc.ListenAddrs())
	// Every node reads some partitions before the records are produced, so
	// no partition moves (and is read twice) after.
	wait.Until(t, time.Minute, "partitions on every node", func() error {
		for _, m := range nodes[0].Members() {
			if m.Partitions == 0 {
				return fmt.Errorf("%s reads none: %+v", m.ID, nodes[0].Members())
			}
		}
		return nil
	})
	var vals []string
	for i := range 600 {
		vals = append(vals, fmt.Sprintf(`{"i":%d}`, i))
	}
	testnode.Produce(t, cl, "cfg_topic", vals, 6)
	testnode.WaitRows(t, nodes[0], "api.cfg_topic", 600, time.Minute)
	var want int64 = -1
	wait.Until(t, 30*time.Second, "the cluster-wide report the same on every node", func() error {
		for _, n := range nodes {
			own, err := n.Report(context.Background())
			if err != nil {
				return err
			}
			all, err := n.ClusterReport(context.Background())
			if err != nil {
				return err
			}
			if all.Cluster == nil || len(all.Cluster.Nodes) != 3 || len(all.Cluster.Missing) != 0 {
				return fmt.Errorf("%s: scope %+v", n.ID(), all.Cluster)
			}
			mine, sum := reportTable(own, "api.cfg_topic").Consumed, reportTable(all, "api.cfg_topic").Consumed
			if sum < 600 || mine >= sum {
				return fmt.Errorf("%s consumed %d itself, %d cluster-wide", n.ID(), mine, sum)
			}
			if want >= 0 && sum != want {
				return fmt.Errorf("%s says %d consumed cluster-wide, another node %d", n.ID(), sum, want)
			}
			want = sum
		}
		return nil
	})
}
