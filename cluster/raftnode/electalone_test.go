package raftnode

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/internal/testing/logbuf"
	"github.com/floe-io/floe/internal/testing/wait"
)

func TestSoleVoter(t *testing.T) {
	voter := func(id string) raft.Server { return raft.Server{ID: raft.ServerID(id), Suffrage: raft.Voter} }
	nonvoter := func(id string) raft.Server { return raft.Server{ID: raft.ServerID(id), Suffrage: raft.Nonvoter} }
	for _, c := range []struct {
		name    string
		servers []raft.Server
		want    bool
	}{
		{"empty", nil, false},
		{"alone", []raft.Server{voter("a")}, true},
		{"alone with a nonvoter", []raft.Server{voter("a"), nonvoter("b")}, true},
		{"another's group", []raft.Server{voter("b")}, false},
		{"a nonvoter here", []raft.Server{nonvoter("a"), voter("b")}, false},
		{"two voters", []raft.Server{voter("a"), voter("b")}, false},
		{"three voters", []raft.Server{voter("a"), voter("b"), voter("c")}, false},
	} {
		if got := soleVoter(raft.Configuration{Servers: c.servers}, "a"); got != c.want {
			t.Errorf("%s: soleVoter = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSoleVoterElectsAtOnce: a single node configured with an hour's
// heartbeat timeout still leads within the test's wait (without electAlone
// it would wait an hour), and runs with the configured timeout again once
// it leads; the same holds when it restarts with its state.
func TestSoleVoterElectsAtOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "solo")
	slow := func(c *raft.Config) {
		c.HeartbeatTimeout = time.Hour
		c.ElectionTimeout = time.Hour
		c.LeaderLeaseTimeout = 100 * time.Millisecond
	}
	for _, run := range []string{"bootstrap", "restart"} {
		n, err := Open(NodeConfig{
			ID: "solo", DataDir: dir, RaftAddr: freeAddr(t), RPCAddr: freeAddr(t), BootstrapExpect: 1,
			Raft: slow, NoSync: true, FailureTimeout: 2 * time.Second, DeadServerTimeout: time.Hour,
			Version: "test", ApplyTimeout: 5 * time.Second,
			Logger: slog.New(slog.NewTextHandler(&logbuf.Buffer{}, nil)),
		})
		if err != nil {
			t.Fatalf("%s: %v", run, err)
		}
		wait.For(t, 30*time.Second, run+": the sole voter to lead", n.IsLeader)
		wait.For(t, 30*time.Second, run+": the configured heartbeat timeout back", func() bool {
			return n.raft.ReloadableConfig().HeartbeatTimeout == time.Hour
		})
		if err := n.Close(); err != nil {
			t.Fatalf("%s: closing: %v", run, err)
		}
	}
}
