package status

import (
	"strings"
	"testing"
	"time"
)

// TestMergeCluster: three nodes' reports of one table joined. Counters are
// summed, the committer's compaction and catalog view is the table's, each
// partition comes from its reader, the worst state wins with every node's
// reason, and a broker one node sees down is down.
func TestMergeCluster(t *testing.T) {
	at := time.Unix(1_000_000, 0)
	table := func(node, state, reason string, consumed, meta int64, compactions int64, parts ...PartitionReport) TableReport {
		var last time.Time
		if compactions > 0 {
			last = at.Add(-time.Duration(compactions) * time.Minute)
		}
		return TableReport{Table: "db.t", State: state, Reason: reason, Rows: 500, Committer: "n2",
			Activity:             Activity{Consumed: consumed, Compactions: compactions, SmallFiles: int(compactions) * 10, LastCompaction: last},
			MetadataBytesWritten: meta, ObjectRequests: ObjectRequests{Put: meta / 10},
			Catalogs:   []CatalogReport{{Catalog: "glue", LastError: "seen by " + node}},
			Partitions: parts}
	}
	p := func(part int32, node string, hw, committed int64, leader string) PartitionReport {
		return PartitionReport{Topic: "t", Partition: part, Node: node, HighWatermark: hw, Committed: committed, Lag: hw - committed, Leader: leader}
	}
	n1 := Report{Node: "n1", Problems: map[string]string{"kafka broker": "b1 down"},
		Brokers: []BrokerStatus{{Addr: "b1:9092", NodeID: 1, Up: false, Since: at.Add(-20 * time.Second), Reason: "no answer for 20s", Partitions: 1}},
		Tables:  []TableReport{table("n1", StateDegraded, "kafka broker: 1 partition", 100, 0, 0, p(0, "n1", 90, 80, "b1:9092"), p(1, "n2", 0, 70, ""))}}
	n2 := Report{Node: "n2",
		Brokers: []BrokerStatus{{Addr: "b1:9092", NodeID: 1, Up: true, LastResponse: at, Partitions: 1}},
		Tables:  []TableReport{table("n2", StateRunning, "", 200, 4000, 3, p(0, "n1", 80, 80, ""), p(1, "n2", 75, 70, "b1:9092"))}}
	n3 := Report{Node: "n3", Tables: []TableReport{table("n3", StateRunning, "", 0, 0, 0)}}
	got := MergeCluster(n1, []Report{n2, n3}, map[string]string{"n4": "connection refused"})
	if len(got.Tables) != 1 {
		t.Fatalf("tables %+v", got.Tables)
	}
	tr := got.Tables[0]
	checks := []struct {
		what string
		ok   bool
	}{
		{"consumed summed", tr.Consumed == 300},
		{"metadata bytes summed", tr.MetadataBytesWritten == 4000 && tr.ObjectRequests.Put == 400},
		{"compactions from everyone", tr.Compactions == 3 && tr.LastCompaction.Equal(at.Add(-3*time.Minute))},
		{"small files from the committer", tr.SmallFiles == 30},
		{"catalogs from the committer", len(tr.Catalogs) == 1 && tr.Catalogs[0].LastError == "seen by n2"},
		{"worst state", tr.State == StateDegraded},
		{"reason names the node", tr.Reason == "on n1: kafka broker: 1 partition"},
		{"partition 0 from its reader n1", tr.Partitions[0].HighWatermark == 90 && tr.Partitions[0].Leader == "b1:9092"},
		{"partition 1 from its reader n2", tr.Partitions[1].HighWatermark == 75},
		{"lag from the readers", tr.Lag == 15},
		{"replicated rows kept", tr.Rows == 500},
		{"node problems per node", got.Problems["n1: kafka broker"] == "b1 down" && strings.Contains(got.Problems["n4: unreachable"], "connection refused")},
		{"broker down if any node sees it", len(got.Brokers) == 1 && !got.Brokers[0].Up && got.Brokers[0].Partitions == 2 && got.Brokers[0].Reason == "on n1: no answer for 20s"},
		{"scope", got.Cluster != nil && strings.Join(got.Cluster.Nodes, ",") == "n1,n2,n3" && got.Cluster.Missing["n4"] != ""},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %+v", c.what, tr)
		}
	}
	// The same on whichever node builds it.
	other := MergeCluster(n2, []Report{n3, n1}, map[string]string{"n4": "connection refused"})
	o := other.Tables[0]
	if o.Consumed != tr.Consumed || o.State != tr.State || o.Lag != tr.Lag || o.SmallFiles != tr.SmallFiles || o.MetadataBytesWritten != tr.MetadataBytesWritten {
		t.Errorf("merged on n2 %+v differs from merged on n1 %+v", o, tr)
	}
}
