package raftnode

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestNoPipelinedReplication: both network transports (plain TCP and
// mutual TLS) refuse to open a replication pipeline, so the leader sends
// one append at a time and a refused append can never park its follower's
// replication (transportConfig, hashicorp/raft#612). With pipelining on,
// AppendEntriesPipeline would dial the peer instead.
func TestNoPipelinedReplication(t *testing.T) {
	dir := t.TempDir()
	src := tlsCA(t, dir)
	for name, tls := range map[string]bool{"tcp": false, "tls": true} {
		t.Run(name, func(t *testing.T) {
			cfg := NodeConfig{ID: "p-" + name, DataDir: filepath.Join(dir, name), RaftAddr: freeAddr(t), Version: "test",
				Raft: fastRaft, NoSync: true, ApplyTimeout: 5 * time.Second, Logger: testLogger(t)}
			if tls {
				cfg.TLS = src(cfg.ID)
			}
			n, err := Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			nt, ok := n.transport.(*raft.NetworkTransport)
			if !ok {
				t.Fatalf("transport %T", n.transport)
			}
			if _, err := nt.AppendEntriesPipeline("peer", raft.ServerAddress(freeAddr(t))); !errors.Is(err, raft.ErrPipelineReplicationNotSupported) {
				t.Fatalf("opening a pipeline: %v, want ErrPipelineReplicationNotSupported", err)
			}
		})
	}
}
