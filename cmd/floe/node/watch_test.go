package node

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestWatchTablePassesThrough: the adapters' WatchTable is the FSM's per
// table watch: an entry on one table wakes its watchers, through either
// adapter, and not those of another table.
func TestWatchTablePassesThrough(t *testing.T) {
	rn := openLeader(t)
	ctx := context.Background()
	if _, err := rn.Apply(ctx, fsm.CreateNamespace{Parts: []string{"db"}}); err != nil {
		t.Fatal(err)
	}
	orders, other := ledger.TableKey([]string{"db", "orders"}), ledger.TableKey([]string{"db", "other"})
	a, c := stateAdapter{node: rn}, catalogState{node: rn}
	mine := map[string]<-chan struct{}{"worker's": a.WatchTable(orders), "catalog sync's": c.WatchTable(orders)}
	theirs := map[string]<-chan struct{}{"worker's": a.WatchTable(other), "catalog sync's": c.WatchTable(other)}
	create := fsm.CreateTable{Ident: []string{"db", "orders"}, MetadataLocation: "file:///w/db/orders/metadata/00000-a.metadata.json"}
	if _, err := rn.Apply(ctx, create); err != nil {
		t.Fatal(err)
	}
	for who, ch := range mine {
		if !closed(ch) {
			t.Errorf("creating db.orders left the %s watch of db.orders open", who)
		}
	}
	for who, ch := range theirs {
		if closed(ch) {
			t.Errorf("creating db.orders woke the %s watch of db.other", who)
		}
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// openLeader starts a single-node Raft group and waits until it leads.
func openLeader(t *testing.T) *raftnode.Node {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	rn, err := raftnode.Open(raftnode.NodeConfig{ID: "n1", RaftAddr: addr, DataDir: filepath.Join(t.TempDir(), "node"), BootstrapExpect: 1, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close() })
	wait.For(t, 10*time.Second, "n1 to lead", rn.IsLeader)
	return rn
}
