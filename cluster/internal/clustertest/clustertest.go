// Package clustertest holds the helpers the cluster subpackages' tests
// share: a one-node Raft group, the catalog's view of it, and a seeded FSM.
// Only tests import it.
package clustertest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/wait"
)

// Apply applies c at index idx through the Raft adapter, as a node does,
// and returns the FSM's refusal.
func Apply(t testing.TB, f *fsm.FSM, idx uint64, c fsm.Command) error {
	t.Helper()
	data, err := fsm.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	res := raftnode.NewRaftFSM(f, nil).Apply(&raft.Log{Index: idx, Type: raft.LogCommand, Data: data}).(raftnode.ApplyResult)
	return res.Err
}

// Seeded returns an FSM holding one table with one pending ledger entry.
func Seeded(t testing.TB) *fsm.FSM {
	f := fsm.New()
	tp := ledger.TopicPartition{Topic: "orders", Partition: 0}
	steps := []fsm.Command{
		fsm.RegisterNode{Node: fsm.Member{ID: "n1", Addr: "127.0.0.1:1"}},
		fsm.CreateNamespace{Parts: []string{"db"}},
		fsm.CreateTable{Ident: []string{"db", "orders"}, MetadataLocation: "file:///w/db/orders/metadata/00000-a.metadata.json"},
		fsm.RegisterSources{Sources: []fsm.TopicSource{{Topic: "orders", Table: ledger.TableKey([]string{"db", "orders"}), Partitions: 1}}},
		fsm.Assign{Partitions: []fsm.PartitionAssignment{{TopicPartition: tp, Assignment: ledger.Assignment{Node: "n1", Epoch: 1}}},
			Committers: []fsm.CommitterAssignment{{Table: ledger.TableKey([]string{"db", "orders"}), Assignment: ledger.Assignment{Node: "n1", Epoch: 1}}}},
		fsm.RecordFiles{Table: ledger.TableKey([]string{"db", "orders"}), Entry: ledger.Entry{ID: "e1", Node: "n1", Records: 10,
			Files:  []ledger.FileDescriptor{{Path: "file:///w/db/orders/data/a.parquet", Format: "PARQUET", RecordCount: 10, SizeBytes: 100, LowerBounds: map[int][]byte{3: {0, 0, 0, 0, 0, 0, 0, 0}}}},
			Ranges: []ledger.Range{{TopicPartition: tp, From: 0, To: 10, Epoch: 1}}}},
	}
	for i, c := range steps {
		if err := Apply(t, f, uint64(i+1), c); err != nil {
			t.Fatalf("step %d %s: %v", i, c.Type(), err)
		}
	}
	return f
}

// SnapshotBytes returns f's snapshot.
func SnapshotBytes(t testing.TB, f *fsm.FSM) []byte {
	t.Helper()
	st, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := fsm.EncodeSnapshot(st)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// FreePort returns a loopback address with a port free a moment ago.
func FreePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// OpenNode starts a single-node group in dir and waits until it leads.
func OpenNode(t testing.TB, dir string) *raftnode.Node {
	t.Helper()
	n, err := raftnode.Open(raftnode.NodeConfig{ID: "n1", RaftAddr: FreePort(t), DataDir: dir, BootstrapExpect: 1, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "n1 to lead", n.IsLeader)
	// Leading is not having applied: after a restart the log's entries are
	// applied after the election; a barrier waits for them.
	if err := n.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// Until its own membership record is applied a node proposes as the
	// oldest build would (raftnode.Node.encode), so commands of a later
	// protocol level (RewindTable, PauseTable, ...) would be refused.
	wait.For(t, 10*time.Second, "n1 to register", n.Registered)
	return n
}

// Replica is the catalog's view of node n (catalog.Replica), wired as
// package node wires it (node.NewCatalog).
func Replica(n *raftnode.Node) NodeReplica { return NodeReplica{n} }

// NodeReplica implements catalog.Replica over a node.
type NodeReplica struct{ n *raftnode.Node }

func (r NodeReplica) Read(fn func(*fsm.State)) { r.n.FSM().Read(fn) }

func (r NodeReplica) Apply(ctx context.Context, c fsm.Command) (uint64, error) {
	return r.n.Apply(ctx, c)
}

func (r NodeReplica) WaitApplied(ctx context.Context, index uint64) error {
	return r.n.FSM().WaitApplied(ctx, index)
}
