package raftnode

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
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"google.golang.org/grpc"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/tlsconf"
)

// NodeConfig configures one Raft member.
type NodeConfig struct {
	ID        string
	RaftAddr  string // listen address of the Raft transport
	Advertise string // address peers reach; defaults to RaftAddr
	// RPCAddr is the listen address of the internal gRPC service (command
	// forwarding, join, health); RPCAdvertise what peers dial.
	RPCAddr      string
	RPCAdvertise string
	DataDir      string
	// BootstrapExpect is how many nodes form a new cluster together: when
	// this node has no Raft state it bootstraps only once it sees that many
	// fresh peers through Join (all of them bootstrap the same
	// configuration). 1 forms a single-node cluster right away; 0 never
	// bootstraps and only joins.
	BootstrapExpect int
	// Join lists peers' internal RPC addresses (host:port); a host that
	// resolves to several addresses (a DNS name with one A record per task)
	// stands for all of them.
	Join []string
	// MaxVoters caps the voters (odd, default 5); the rest are non-voters.
	MaxVoters int
	// FailureTimeout: a member that has not answered the leader's health
	// checks for this long is failed (its work moves; a failed voter is
	// replaced by a healthy non-voter). Default 5 s.
	FailureTimeout time.Duration
	// DeadServerTimeout: a member unreachable this long is removed from the
	// configuration and the membership. Default 10 min.
	DeadServerTimeout time.Duration
	// Zone, Version and AdminAddr describe this node to the others; the
	// node keeps its membership record up to date with them.
	Zone      string
	Version   string
	AdminAddr string
	// Load reports this node's fetch throughput per partition (bytes/s),
	// for the leader's placement. May be nil.
	Load func() map[string]float64
	// NoSync skips fsync of the Raft log. Only tests and benchmarks set it.
	NoSync bool
	// ApplyTimeout bounds one proposal (default 10 s).
	ApplyTimeout time.Duration
	// Transport replaces the TCP transport (tests use raft's in-memory
	// one); the internal RPC is then not started unless RPCAddr is set.
	Transport raft.Transport
	// TLS, if set, puts the internal RPC and the Raft transport under
	// mutual TLS (tls.go); nil: plaintext (config refuses that on a
	// non-loopback address unless cluster.insecure_internal is set).
	TLS *tlsconf.Source
	// RPCServerInterceptor and RPCClientInterceptor, if set, wrap every
	// internal RPC this node serves and makes (tests cut a node off or lose
	// answers with them).
	RPCServerInterceptor grpc.UnaryServerInterceptor
	RPCClientInterceptor grpc.UnaryClientInterceptor
	// Raft tunes Raft timeouts in tests; nil keeps the defaults.
	Raft   func(*raft.Config)
	Logger *slog.Logger
	// Observer, if set, is told of apply latencies and leader changes (for
	// metrics). See observe.go.
	Observer Observer
	// FSM adjusts the state machine's command table; tests stand in for a
	// node of an older build with fsm.Without.
	FSM []fsm.Option
	// Protocol is the level a halted node states when it asks the leader
	// for a state to resume from (resume.go); 0 is this build's. Tests
	// stand in for an older build with it and FSM.
	Protocol int
	// ResumeEvery is how often a halted node asks (default 10 s).
	ResumeEvery time.Duration
	// Now is the wall clock this node reports to the leader's clock-skew
	// check (clockskew.go) and reads it by; nil is time.Now. Tests skew a
	// node with it.
	Now func() time.Time
}

// Node is one member of the Raft group with its FSM.
type Node struct {
	cfg       NodeConfig
	raft      *raft.Raft
	fsm       *fsm.FSM
	sm        *RaftFSM
	store     *watchedStore
	transport raft.Transport
	rpc       *rpcServer
	clients   rpcClients
	health    *healthTracker
	log       *slog.Logger
	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	draining  atomic.Bool // this process asked to drain
	// registered: this process found or wrote its membership record once;
	// from then on a draining mark set by an operator is kept.
	registered atomic.Bool
	left       atomic.Bool // this process asked to leave the group (rejoin.go stays out)
	// leaderChangedAt: unix ns of the last leader change seen (observe.go).
	leaderChangedAt atomic.Int64
	// resumeProblem: why a halted node could not resume yet (resume.go).
	resumeProblem atomic.Value
}

// Open starts the Raft member described by cfg. A node with Raft state
// rejoins its group; a fresh one bootstraps or joins in the background as
// cfg says (see join.go), so Open returns before the group has a leader.
func Open(cfg NodeConfig) (*Node, error) {
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	st, err := openStorage(cfg)
	if err != nil {
		return nil, err
	}
	transport, err := openTransport(cfg, st.hlog)
	if err != nil {
		st.store.Close()
		return nil, err
	}
	closeAll := func() {
		if c, ok := transport.(io.Closer); ok {
			_ = c.Close()
		}
		st.store.Close()
	}
	f := fsm.New(cfg.FSM...)
	sm := NewRaftFSM(f, cfg.Logger)
	r, lease, has, err := startRaft(cfg, st, transport, sm)
	if err != nil {
		closeAll()
		return nil, err
	}
	n := &Node{cfg: cfg, raft: r, fsm: f, sm: sm, store: st.store, transport: transport, log: cfg.Logger, stop: make(chan struct{})}
	n.health = newHealthTracker(cfg.FailureTimeout)
	n.clients.icp = cfg.RPCClientInterceptor
	n.clients.creds = rpcClientCreds(cfg.TLS)
	if cfg.RPCAddr != "" {
		if n.rpc, err = listenRPC(cfg.RPCAddr, internalService{n}, cfg.RPCServerInterceptor, rpcServerCreds(cfg.TLS, cfg.Logger)); err != nil {
			_ = r.Shutdown().Error()
			closeAll()
			return nil, err
		}
		if cfg.RPCAdvertise == "" || strings.HasSuffix(cfg.RPCAdvertise, ":0") {
			n.cfg.RPCAdvertise = n.rpc.Addr()
		}
	}
	n.electAlone(lease) // electalone.go
	n.startLoops(has)
	return n, nil
}

// withDefaults fills cfg's unset fields and turns listen addresses into
// ones peers can dial.
func withDefaults(cfg NodeConfig) (NodeConfig, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ApplyTimeout == 0 {
		cfg.ApplyTimeout = 10 * time.Second
	}
	if cfg.ResumeEvery == 0 {
		cfg.ResumeEvery = 10 * time.Second
	}
	if cfg.Advertise == "" && cfg.Transport == nil {
		a, err := advertisable(cfg.RaftAddr)
		if err != nil {
			return cfg, fmt.Errorf("raft advertise address: %w", err)
		}
		cfg.Advertise = a
	}
	if cfg.RPCAdvertise == "" && cfg.RPCAddr != "" && !strings.HasSuffix(cfg.RPCAddr, ":0") {
		a, err := advertisable(cfg.RPCAddr)
		if err != nil {
			return cfg, fmt.Errorf("rpc advertise address: %w", err)
		}
		cfg.RPCAdvertise = a
	}
	// Peers call the admin address (a resume looking for suspended records,
	// maintenance run on a table's committer): 0.0.0.0 is not dialable.
	if cfg.AdminAddr != "" && !strings.HasSuffix(cfg.AdminAddr, ":0") {
		if a, err := advertisable(cfg.AdminAddr); err == nil {
			cfg.AdminAddr = a
		}
	}
	if cfg.MaxVoters <= 0 {
		cfg.MaxVoters = 5
	}
	if cfg.FailureTimeout <= 0 {
		cfg.FailureTimeout = 5 * time.Second
	}
	if cfg.DeadServerTimeout <= 0 {
		cfg.DeadServerTimeout = 10 * time.Minute
	}
	return cfg, nil
}

// storage is a node's Raft log and snapshot store under its data directory.
type storage struct {
	store *watchedStore
	snaps *raft.FileSnapshotStore
	hlog  hclog.Logger
}

func openStorage(cfg NodeConfig) (storage, error) {
	dir := filepath.Join(cfg.DataDir, "raft")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return storage{}, fmt.Errorf("creating raft directory %s: %w", dir, err)
	}
	logw := &slogWriter{log: cfg.Logger.With("component", "raft")}
	hlog := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: logw, DisableTime: true})

	path := filepath.Join(dir, "raft.db")
	bolt, err := raftboltdb.New(raftboltdb.Options{Path: path, NoSync: cfg.NoSync})
	if err != nil {
		return storage{}, fmt.Errorf("opening raft log %s: %w", dir, err)
	}
	store := &watchedStore{BoltStore: bolt, path: path}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hlog)
	if err != nil {
		store.Close()
		return storage{}, fmt.Errorf("opening raft snapshots %s: %w", dir, err)
	}
	return storage{store: store, snaps: snaps, hlog: hlog}, nil
}

// transportConfig is the network transport's: a pool of 3 connections per
// peer, 10 s I/O deadlines, and no pipelined replication (one append in
// flight per follower). hashicorp/raft's pipeline deadlocks when a follower
// refuses an append while the next is in flight (both of its channels are
// unbuffered at the default of 2 in flight; hashicorp/raft#612): the leader
// then never sends that follower another entry, while its heartbeats keep
// the follower from calling an election, until leadership moves. A full
// disk on a follower (or a leader that stepped down on one) made a node
// trail the group by up to two minutes in the chaos runs; hashicorp found
// pipelining of little use on a LAN (hashicorp/raft#541).
func transportConfig(stream raft.StreamLayer, hlog hclog.Logger) *raft.NetworkTransportConfig {
	return &raft.NetworkTransportConfig{Stream: stream, MaxPool: 3, Timeout: 10 * time.Second, Logger: hlog, MaxRPCsInFlight: 1}
}

// openTransport returns cfg.Transport, or a TCP transport listening on
// RaftAddr and advertising Advertise.
func openTransport(cfg NodeConfig, hlog hclog.Logger) (raft.Transport, error) {
	if cfg.Transport != nil {
		return cfg.Transport, nil
	}
	adv, err := net.ResolveTCPAddr("tcp", cfg.Advertise)
	if err != nil {
		return nil, fmt.Errorf("resolving raft advertise address %s: %w", cfg.Advertise, err)
	}
	if cfg.TLS != nil {
		stream, err := newTLSStreamLayer(cfg.RaftAddr, adv, cfg.TLS, cfg.Logger.With("component", "raft"))
		if err != nil {
			return nil, err
		}
		return raft.NewNetworkTransportWithConfig(transportConfig(stream, hlog)), nil
	}
	tcp, err := raft.NewTCPTransportWithConfig(cfg.RaftAddr, adv, transportConfig(nil, hlog))
	if err != nil {
		return nil, fmt.Errorf("listening for raft on %s: %w", cfg.RaftAddr, err)
	}
	return tcp, nil
}

// startRaft starts Raft over the storage, first bootstrapping a
// single-node group when cfg asks for one and there is no state. has
// reports whether the node has (now) Raft state; one without joins later.
// lease is the leader lease timeout Raft runs with.
func startRaft(cfg NodeConfig, st storage, transport raft.Transport, sm raft.FSM) (r *raft.Raft, lease time.Duration, has bool, err error) {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.Logger = st.hlog
	rc.SnapshotThreshold = 4096
	if cfg.Raft != nil {
		cfg.Raft(rc)
	}
	has, err = raft.HasExistingState(st.store, st.store, st.snaps)
	if err != nil {
		return nil, 0, false, fmt.Errorf("inspecting raft state: %w", err)
	}
	if !has && cfg.BootstrapExpect == 1 {
		conf := raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: transport.LocalAddr()}}}
		if err := raft.BootstrapCluster(rc, st.store, st.store, st.snaps, transport, conf); err != nil {
			return nil, 0, false, fmt.Errorf("bootstrapping raft: %w", err)
		}
		has = true
	}
	r, err = raft.NewRaft(rc, sm, st.store, st.store, st.snaps, transport)
	if err != nil {
		return nil, 0, false, fmt.Errorf("starting raft: %w", err)
	}
	return r, rc.LeaderLeaseTimeout, has, nil
}

// startLoops starts the node's background work: joining (a node without
// Raft state) or rejoining (one with state the group may have removed), the
// autopilot, the leader observer and the halted leader's step-down.
func (n *Node) startLoops(hasState bool) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if !hasState {
			joiner{n}.loop()
		}
		rejoiner{n}.loop() // rejoin.go
	}()
	n.wg.Add(2)
	go func() {
		defer n.wg.Done()
		autopilot{n}.register()
	}()
	go func() {
		defer n.wg.Done()
		n.RunWhileLeader(context.Background(), autopilot{n}.lead)
	}()
	n.observeLeaders()      // observe.go
	n.stepDownWhileHalted() // halt.go
	n.resumeWhileHalted()   // resume.go
}

// now is the node's wall clock (NodeConfig.Now).
func (n *Node) now() time.Time {
	if n.cfg.Now != nil {
		return n.cfg.Now()
	}
	return time.Now()
}

// ID returns the node id.
func (n *Node) ID() string { return n.cfg.ID }

// RPCAddr returns the address peers reach this node's internal RPC at.
func (n *Node) RPCAddr() string { return n.cfg.RPCAdvertise }

// FSM returns the node's state machine for reads.
func (n *Node) FSM() *fsm.FSM { return n.fsm }

// IsLeader reports whether this node is the Raft leader.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Leader returns the leader's address and id, empty when unknown.
func (n *Node) Leader() (string, string) {
	addr, id := n.raft.LeaderWithID()
	return string(addr), string(id)
}

// RaftState returns the local Raft role as a string.
func (n *Node) RaftState() string { return n.raft.State().String() }

// IsMember reports whether this node is in the latest Raft configuration.
func (n *Node) IsMember() bool {
	f := n.raft.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	for _, s := range f.Configuration().Servers {
		if s.ID == raft.ServerID(n.cfg.ID) {
			return true
		}
	}
	return false
}

// WaitLeader blocks until the group has a leader or ctx ends.
func (n *Node) WaitLeader(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if addr, _ := n.raft.LeaderWithID(); addr != "" && n.IsMember() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for a raft leader: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// Close shuts Raft down and releases the log and transport.
func (n *Node) Close() error {
	var errs []error
	n.closeOnce.Do(func() {
		close(n.stop)
		if n.rpc != nil {
			n.rpc.Stop()
		}
		if err := n.raft.Shutdown().Error(); err != nil {
			errs = append(errs, fmt.Errorf("shutting down raft: %w", err))
		}
		n.wg.Wait()
		n.clients.close()
		if c, ok := n.transport.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("closing raft transport: %w", err))
			}
		}
		if err := n.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing raft log: %w", err))
		}
	})
	return errors.Join(errs...)
}

// slogWriter turns hclog's text lines into structured slog records.
type slogWriter struct {
	log *slog.Logger
	// refusedSeen: a snapshot refused by a halted FSM was logged once.
	// Raft tries again every snapshot interval until the node runs a newer
	// build; the repeats go to debug.
	refusedSeen atomic.Bool
}

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
		case strings.Contains(line, "[WARN]") && !firstElection(line):
			level = slog.LevelWarn
		}
		// The level is slog's now; "[WARN]  raft: " would only repeat it
		// and the component.
		if _, rest, ok := strings.Cut(line, "]"); ok && strings.HasPrefix(line, "[") {
			line = strings.TrimPrefix(strings.TrimSpace(rest), "raft: ")
		}
		if strings.Contains(line, "snapshot refused") {
			if w.refusedSeen.Swap(true) {
				level = slog.LevelDebug
			} else {
				level = slog.LevelWarn
				line += " (Raft retries at every snapshot interval while the FSM is halted; the repeats are logged at debug)"
			}
		}
		w.log.Log(context.Background(), level, line)
	}
	return len(p), nil
}

var _ io.Writer = (*slogWriter)(nil)

// firstElection reports whether a raft line is the election every node
// starts after a start, before it has heard of any leader (raft logs it at
// WARN with an empty last-leader-id; a single node logs it at every start).
// A timeout after a leader was known stays a warning.
func firstElection(line string) bool {
	return strings.Contains(line, "heartbeat timeout reached, starting election") &&
		(strings.HasSuffix(line, "last-leader-id=") || strings.Contains(line, "last-leader-id= "))
}
