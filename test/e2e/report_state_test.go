package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestCommittedTableRunningOnEveryNode: PENDING means nothing committed yet
// on every node. The table's one partition and its committer role sit on at
// most two of three nodes; once its records are committed, every node's
// report shows it RUNNING, the node that does none of its work included
// (its runtime status knows nothing of the table beyond PENDING).
func TestCommittedTableRunningOnEveryNode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(1, "cfg_topic")})
	nodes := startAPITrio(t, kc.ListenAddrs())
	const records = 20
	var recs []*kgo.Record
	for i := range records {
		recs = append(recs, &kgo.Record{Topic: "cfg_topic", Value: fmt.Appendf(nil, `{"n":%d}`, i)})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	key := ledger.TableKey([]string{"api", "cfg_topic"})
	for _, n := range nodes {
		wait.Until(t, time.Minute, "the records committed as "+n.ID()+" sees them", func() error {
			var committed int64
			n.Raft().FSM().Read(func(s *fsm.State) {
				for _, o := range s.Ledger.Offsets[key] {
					committed += o.Committed
				}
			})
			if committed != records {
				return fmt.Errorf("committed offset %d, want %d", committed, records)
			}
			return nil
		})
	}
	idle := 0
	for _, n := range nodes {
		rep, err := n.Report(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var tr *status.TableReport
		for i := range rep.Tables {
			if rep.Tables[i].Table == ledger.DisplayName(key) {
				tr = &rep.Tables[i]
			}
		}
		if tr == nil {
			t.Fatalf("%s's report has no table %s", n.ID(), ledger.DisplayName(key))
		}
		if tr.State != status.StateRunning {
			t.Errorf("%s shows the committed table %s (%q), want %s", n.ID(), tr.State, tr.Reason, status.StateRunning)
		}
		if tr.NodeCommits == 0 && tr.Consumed == 0 {
			idle++
		}
	}
	if idle == 0 {
		t.Fatal("every node did some of the table's work: the test needs one that did none")
	}
}
