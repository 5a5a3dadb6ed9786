package backend

import (
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/wait"
)

// openLeader opens a one-node group n1 that leads, with the FSM options.
func openLeader(t *testing.T, opts ...fsm.Option) *raftnode.Node {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	rn, err := raftnode.Open(raftnode.NodeConfig{ID: "n1", RaftAddr: addr, DataDir: filepath.Join(t.TempDir(), "node"), BootstrapExpect: 1, NoSync: true, FSM: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rn.Close() })
	wait.For(t, 10*time.Second, "n1 to lead", rn.IsLeader)
	return rn
}

// newTestBackend is node n1's backend on rn, started when started closes.
func newTestBackend(rn *raftnode.Node, started chan struct{}) *Backend {
	cfg := config.Defaults()
	cfg.Node.ID = "n1"
	return New(Deps{Config: cfg, Log: slog.New(slog.DiscardHandler), Raft: rn, Started: started, History: status.NewHistory()})
}
