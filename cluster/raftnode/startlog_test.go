package raftnode

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/testing/logbuf"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestSingleNodeStartIsQuiet: a single node's start-up election is not a
// warning (raft logs every first election at WARN), while the same line
// after a leader was known stays one.
func TestSingleNodeStartIsQuiet(t *testing.T) {
	logs := &logbuf.Buffer{}
	n, err := Open(NodeConfig{
		ID: "solo", DataDir: filepath.Join(t.TempDir(), "solo"), RaftAddr: freeAddr(t), RPCAddr: freeAddr(t), BootstrapExpect: 1,
		Raft: fastRaft, NoSync: true, FailureTimeout: 2 * time.Second, DeadServerTimeout: time.Hour,
		Version: "test", ApplyTimeout: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	wait.For(t, 20*time.Second, "the node to lead", n.IsLeader)
	out := logs.String()
	if !strings.Contains(out, "heartbeat timeout reached, starting election") {
		t.Fatalf("raft did not log its start-up election (has its wording changed?):\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "starting election") {
			t.Fatalf("start-up election logged as a warning: %s", line)
		}
		if strings.Contains(line, "[WARN]") || strings.Contains(line, "[INFO]") {
			t.Fatalf("hclog's level tag kept in the message: %s", line)
		}
	}
	for _, c := range []struct {
		line string
		want bool
	}{
		{"[WARN]  raft: heartbeat timeout reached, starting election: last-leader-addr= last-leader-id=", true},
		{"[WARN]  raft: heartbeat timeout reached, starting election: last-leader-addr=127.0.0.1:7420 last-leader-id=n1", false},
	} {
		if got := firstElection(c.line); got != c.want {
			t.Errorf("firstElection(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}
