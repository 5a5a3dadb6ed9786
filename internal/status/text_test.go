package status

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestWriteText(t *testing.T) {
	rep := Report{Node: "n1", Leader: "n1", RaftState: "Leader", Problems: map[string]string{"kafka": "dial tcp: refused"},
		Memory: &MemoryReport{HeldBytes: 3 << 19, LimitBytes: 48 << 20},
		Tables: []TableReport{{Table: "db.orders", State: "DEGRADED", Reason: "storage: bucket gone", Rows: 42, DataFiles: 2, Snapshots: 2,
			LastCommit: time.Now().Add(-3 * time.Second), LastCommitAgeSec: 3, FreshnessSec: 4.2,
			Partitions: []PartitionReport{{Topic: "orders", Partition: 0, Committed: 21, Recorded: 30, HighWatermark: 40, Lag: 19, Node: "n1", Epoch: 1},
				{Topic: "orders", Partition: 1, Node: "n2", Epoch: 2, Held: "draining"}},
			Formats: []string{"iceberg", "delta"}, Delta: &DeltaReport{Version: 7, Sequence: 5}},
			{Table: "db.plain", State: "RUNNING", Formats: []string{"delta"}, Delta: &DeltaReport{Version: 1, Sequence: 1},
				Activity: Activity{DeadLetterDeltaVersion: new(int64(3))}}}}
	var b bytes.Buffer
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"problem: kafka: dial tcp: refused", "db.orders", "DEGRADED", "42", "3s ago", "4.2s", "storage: bucket gone", "orders/0", "19", "n2 (held: draining)", "memory budget: 1.5 of 48.0 MiB held",
		"db.orders formats: iceberg, delta; delta version 7 (commit sequence 5)\n",
		"db.plain formats: delta; delta version 1 (commit sequence 1); dead letters' delta version 3\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

// TestWriteTextUpgradeRequired: a halted node says so in its header, and a
// halted member in the member list.
func TestWriteTextUpgradeRequired(t *testing.T) {
	rep := Report{Node: "n2", Leader: "n1", RaftState: "Follower", State: NodeUpgradeRequired,
		Problems: map[string]string{"upgrade": "upgrade required: log entry 9 has command type 23"},
		Members: []MemberReport{{ID: "n1", Role: "leader", Healthy: true}, {ID: "n2", Role: "voter", Healthy: true, UpgradeRequired: true},
			{ID: "n3", Role: "voter", Healthy: true, ClockSkewed: true, ClockOffset: -312}}}
	var b bytes.Buffer
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"node n2 (Follower, UPGRADE_REQUIRED)", "problem: upgrade: upgrade required: log entry 9", "upgrade required  ", "clock off by -312s"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

// TestWriteTextBrokers: one line per broker, up with its last answer or
// down with how long, how many partitions wait and why.
func TestWriteTextBrokers(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	rep := Report{Node: "n1", GeneratedAt: now, Brokers: []BrokerStatus{
		{Addr: "b1:9092", NodeID: 1, Up: true, LastResponse: now.Add(-200 * time.Millisecond), Partitions: 3},
		{Addr: "b2:9092", NodeID: 2, Since: now.Add(-42 * time.Second), Partitions: 2, Reason: "no answer for 52s"},
	}}
	var b bytes.Buffer
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"kafka broker b1:9092: up, answered 200ms ago, leads 3 partitions read here\n",
		"kafka broker b2:9092: DOWN for 42s, 2 partitions read here wait on it: no answer for 52s\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}
