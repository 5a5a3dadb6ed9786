package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// NodeConfig configures one Raft member.
type NodeConfig struct {
	ID        string
	RaftAddr  string // listen address of the Raft transport
	Advertise string // address peers reach; defaults to RaftAddr
	DataDir   string
	// Bootstrap makes this node form a new single-node group when its data
	// directory holds no Raft state yet.
	Bootstrap bool
	// NoSync skips fsync of the Raft log. Only tests set it.
	NoSync bool
	// ApplyTimeout bounds one proposal (default 10 s).
	ApplyTimeout time.Duration
	Logger       *slog.Logger
}

// Node is one member of the Raft group with its FSM.
type Node struct {
	cfg       NodeConfig
	raft      *raft.Raft
	fsm       *FSM
	store     *raftboltdb.BoltStore
	transport *raft.NetworkTransport
	log       *slog.Logger
}

// Open starts the Raft member described by cfg.
func Open(cfg NodeConfig) (*Node, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ApplyTimeout == 0 {
		cfg.ApplyTimeout = 10 * time.Second
	}
	if cfg.Advertise == "" {
		cfg.Advertise = cfg.RaftAddr
	}
	dir := filepath.Join(cfg.DataDir, "raft")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating raft directory %s: %w", dir, err)
	}
	logw := &slogWriter{log: cfg.Logger.With("component", "raft")}
	hlog := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: logw, DisableTime: true})

	store, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db"), NoSync: cfg.NoSync})
	if err != nil {
		return nil, fmt.Errorf("opening raft log %s: %w", dir, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hlog)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("opening raft snapshots %s: %w", dir, err)
	}
	adv, err := net.ResolveTCPAddr("tcp", cfg.Advertise)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("resolving raft advertise address %s: %w", cfg.Advertise, err)
	}
	transport, err := raft.NewTCPTransportWithLogger(cfg.RaftAddr, adv, 3, 10*time.Second, hlog)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("listening for raft on %s: %w", cfg.RaftAddr, err)
	}
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.Logger = hlog
	// A single node elects itself quickly; timeouts stay Raft's defaults
	// otherwise, which suit a LAN.
	rc.SnapshotThreshold = 4096
	fsm := NewFSM(cfg.Logger)

	if cfg.Bootstrap {
		has, err := raft.HasExistingState(store, store, snaps)
		if err != nil {
			transport.Close()
			store.Close()
			return nil, fmt.Errorf("inspecting raft state: %w", err)
		}
		if !has {
			conf := raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: transport.LocalAddr()}}}
			if err := raft.BootstrapCluster(rc, store, store, snaps, transport, conf); err != nil {
				transport.Close()
				store.Close()
				return nil, fmt.Errorf("bootstrapping raft: %w", err)
			}
		}
	}
	r, err := raft.NewRaft(rc, fsm, store, store, snaps, transport)
	if err != nil {
		transport.Close()
		store.Close()
		return nil, fmt.Errorf("starting raft: %w", err)
	}
	return &Node{cfg: cfg, raft: r, fsm: fsm, store: store, transport: transport, log: cfg.Logger}, nil
}

// ID returns the node id.
func (n *Node) ID() string { return n.cfg.ID }

// FSM returns the node's state machine for reads.
func (n *Node) FSM() *FSM { return n.fsm }

// IsLeader reports whether this node is the Raft leader.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Leader returns the leader's address and id, empty when unknown.
func (n *Node) Leader() (string, string) {
	addr, id := n.raft.LeaderWithID()
	return string(addr), string(id)
}

// RaftState returns the local Raft role as a string.
func (n *Node) RaftState() string { return n.raft.State().String() }

// WaitLeader blocks until the group has a leader or ctx ends.
func (n *Node) WaitLeader(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if addr, _ := n.raft.LeaderWithID(); addr != "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for a raft leader: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// Apply proposes a command and waits until it is applied. It returns the
// log index and the FSM's verdict. Concurrent proposals are batched by Raft
// into one log write, which is what keeps fsync cost per commit low.
func (n *Node) Apply(ctx context.Context, c Command) (uint64, error) {
	data, err := Encode(c)
	if err != nil {
		return 0, err
	}
	if n.raft.State() != raft.Leader {
		return 0, fmt.Errorf("applying %s: %w", c.Type(), ErrNotLeader)
	}
	timeout := n.cfg.ApplyTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl)
	}
	f := n.raft.Apply(data, timeout)
	if err := f.Error(); err != nil {
		return 0, fmt.Errorf("applying %s: %w", c.Type(), err)
	}
	res, _ := f.Response().(ApplyResult)
	return f.Index(), res.Err
}

// Close shuts Raft down and releases the log and transport.
func (n *Node) Close() error {
	var errs []error
	if err := n.raft.Shutdown().Error(); err != nil {
		errs = append(errs, fmt.Errorf("shutting down raft: %w", err))
	}
	if err := n.transport.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing raft transport: %w", err))
	}
	if err := n.store.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing raft log: %w", err))
	}
	return errors.Join(errs...)
}

// slogWriter turns hclog's text lines into structured slog records.
type slogWriter struct{ log *slog.Logger }

func (w *slogWriter) Write(p []byte) (int, error) {
	sc := bufio.NewScanner(strings.NewReader(string(p)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		level := slog.LevelInfo
		switch {
		case strings.Contains(line, "[ERROR]"):
			level = slog.LevelError
		case strings.Contains(line, "[WARN]"):
			level = slog.LevelWarn
		}
		w.log.Log(context.Background(), level, line)
	}
	return len(p), nil
}

var _ io.Writer = (*slogWriter)(nil)
