package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // registers s3:// file IO

	"github.com/floe-io/floe/admin"
	"github.com/floe-io/floe/assignment"
	"github.com/floe-io/floe/cluster"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/ledger"
	"github.com/floe-io/floe/metrics"
	"github.com/floe-io/floe/notify"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
	"github.com/floe-io/floe/status"
	"github.com/floe-io/floe/worker"
	"github.com/floe-io/floe/worker/source"
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"

// Maintenance cadence; tests shorten them.
var (
	expireInterval time.Duration // 0: the worker's default (1 min)
	orphanInterval time.Duration // 0: the worker's default (1 h)
)

// floeNode is one running Floe node: every component wired together.
type floeNode struct {
	cfg     config.Config
	log     *slog.Logger
	raft    *cluster.Node
	catalog *cluster.Catalog
	worker  *worker.Worker
	admin   *admin.Server
	backup  *cluster.Backup
	state   stateAdapter
	kafka   *source.KafkaClient // rewinds resolve offsets with it (api_tables.go)
	metrics *metrics.Metrics
	peers   peerClient // calls to other nodes' admin APIs
	// catalogs: the REST catalog endpoint and the external catalog mirrors.
	catalogs *catalogParts
	// started is closed once the worker runs; before, the node is joining.
	started chan struct{}

	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once
	stopErr  error
}

// nodeOptions are start-up choices that are not configuration.
type nodeOptions struct {
	NoSync  bool // tests only: no fsync of the Raft log
	Recover bool // restore the state from the warehouse backup (floe serve --recover)
}

// ioProps turns the warehouse config into iceberg-go FileIO properties.
func ioProps(w config.Warehouse) iceberg.Properties {
	p := iceberg.Properties{}
	set := func(k, v string) {
		if v != "" {
			p[k] = v
		}
	}
	set(icebergio.S3EndpointURL, w.S3.Endpoint)
	set(icebergio.S3Region, w.S3.Region)
	set(icebergio.S3AccessKeyID, w.S3.AccessKeyID)
	set(icebergio.S3SecretAccessKey, w.S3.SecretAccessKey)
	set(icebergio.S3SessionToken, w.S3.SessionToken)
	return p
}

// startNode starts a node; noSync is for tests only.
func startNode(ctx context.Context, cfg config.Config, log *slog.Logger, noSync bool) (*floeNode, error) {
	return startNodeWith(ctx, cfg, log, nodeOptions{NoSync: noSync})
}

// startNodeWith opens Raft and the admin server, waits until the node is in
// a group with a leader (bootstrapping or joining as configured), restores
// the state from the warehouse when asked to, and then starts the worker,
// the assignment controller and the state backup.
func startNodeWith(ctx context.Context, cfg config.Config, log *slog.Logger, opts nodeOptions) (*floeNode, error) {
	n := &floeNode{cfg: cfg, log: log, started: make(chan struct{}), done: make(chan struct{})}
	n.metrics = metrics.New(n, version)
	apiOpts, err := adminOptions(cfg, n.metrics, n) // adminwire.go
	if err != nil {
		return nil, err
	}
	n.peers = newPeerClient(cfg, apiOpts)
	var wk atomic.Pointer[worker.Worker]
	rn, err := cluster.Open(cluster.NodeConfig{
		ID: cfg.Node.ID, RaftAddr: cfg.Node.RaftAddr, Advertise: cfg.Node.AdvertiseAddr,
		RPCAddr: cfg.Node.RPCAddr, RPCAdvertise: cfg.Node.RPCAdvertise, DataDir: cfg.Node.DataDir,
		BootstrapExpect: cfg.Cluster.BootstrapExpect, Join: cfg.Cluster.Join, MaxVoters: cfg.Cluster.MaxVoters,
		FailureTimeout: cfg.Cluster.FailureTimeout.D(), DeadServerTimeout: cfg.Cluster.DeadServerTimeout.D(),
		Zone: cfg.Node.Zone, Version: version, AdminAddr: cfg.Node.AdminAddr, NoSync: opts.NoSync, Logger: log,
		Observer: n.metrics,
		Load: func() map[string]float64 {
			w := wk.Load()
			if w == nil {
				return nil
			}
			out := map[string]float64{}
			for tp, r := range w.Rates() {
				out[tp.String()] = r
			}
			return out
		},
	})
	if err != nil {
		return nil, err
	}
	n.raft, n.state = rn, stateAdapter{node: rn, expect: cfg.Cluster.BootstrapExpect}
	if n.admin, err = admin.ListenAPI(cfg.Node.AdminAddr, n, apiOpts); err != nil {
		rn.Close()
		return nil, err
	}
	adminErr := make(chan error, 1)
	go func() { adminErr <- n.admin.Serve() }()
	fail := func(err error) (*floeNode, error) {
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = n.admin.Shutdown(sctx)
		scancel()
		<-adminErr
		rn.Close()
		return nil, err
	}
	if err := n.waitJoined(ctx); err != nil {
		return fail(err)
	}
	if opts.Recover {
		if err := n.recoverState(ctx); err != nil {
			return fail(err)
		}
	} else if err := n.guardBackup(ctx); err != nil {
		return fail(&exitError{code: exitConfig, err: err})
	}
	n.catalog = cluster.NewCatalog(rn, cfg.Warehouse.Location, ioProps(cfg.Warehouse))
	nsLocations := map[string]string{}
	for ns, c := range cfg.Namespaces {
		nsLocations[ns] = strings.TrimSuffix(c.Location, "/")
	}
	sink := icebergsink.New(n.catalog, int64(cfg.TargetFileSize), log, nsLocations)
	kc, err := source.NewKafkaClient(cfg.Kafka)
	if err != nil {
		return fail(err)
	}
	n.kafka = kc
	n.worker, err = worker.New(worker.Config{
		NodeID: cfg.Node.ID, Tables: cfg.Tables, CommitInterval: cfg.CommitInterval.D(),
		TargetFileSize: cfg.TargetFileSize, MemoryBudget: cfg.MemoryBudget,
		ExpireInterval: expireInterval, OrphanInterval: orphanInterval,
		IsFenced: func(err error) bool { return errors.Is(err, cluster.ErrStaleCommitter) },
		OnCommit: n.metrics.ObserveCommit,
	}, kc, n.state, n.state, sink, status.NewTracker(), log)
	if err != nil {
		return fail(err)
	}
	if cfg.SchemaRegistry.URL != "" {
		n.worker.SetSchemaDecoder(newSchemaDecoder(cfg.SchemaRegistry)) // schemas.go
	}
	if err := n.wireDeadLetterTopics(cfg); err != nil { // schemas.go
		return fail(err)
	}
	wk.Store(n.worker)
	n.backup = cluster.NewBackup(rn.FSM(), cfg.Warehouse.Location, ioProps(cfg.Warehouse), log)
	n.backup.RecordWith(func(ctx context.Context, c cluster.BackupWritten) (uint64, error) { return rn.Apply(ctx, c) })
	if err := n.startCatalogs(); err != nil {
		return fail(err)
	}
	rctx, rcancel := context.WithCancel(context.Background())
	n.cancel = rcancel
	ctl := assignment.NewController(n.state, log)
	go func() {
		defer close(n.done)
		var wg sync.WaitGroup
		wg.Add(3)
		go func() { defer wg.Done(); ctl.Run(rctx) }()
		go func() { // no-op without a webhook URL
			defer wg.Done()
			notify.New(notify.Config{URL: cfg.Notifications.WebhookURL, Interval: cfg.Notifications.Interval.D(), Log: log.With("component", "notify")}, n).Run(rctx)
		}()
		go func() { defer wg.Done(); n.backup.Run(rctx, cfg.Cluster.BackupInterval.D(), rn.IsLeader) }()
		if err := n.worker.Run(rctx); err != nil {
			log.Error("worker stopped", "err", err)
		}
		wg.Wait()
		n.stopCatalogs()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = n.admin.Shutdown(sctx)
		scancel()
		<-adminErr
	}()
	close(n.started)
	log.Info("floe node started", "node", cfg.Node.ID, "raft", cfg.Node.RaftAddr, "rpc", rn.RPCAddr(), "admin", n.admin.Addr(), "warehouse", cfg.Warehouse.Location, "version", version)
	return n, nil
}

// waitJoined blocks until this node is a registered member of a group with
// a leader. Joining may wait for peers that start later, so only ctx bounds
// it; progress is logged.
func (n *floeNode) waitJoined(ctx context.Context) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	last := time.Now()
	for {
		if _, leader := n.raft.Leader(); leader != "" && n.raft.IsMember() && n.raft.Registered() {
			return nil
		}
		if time.Since(last) > 15*time.Second {
			last = time.Now()
			n.log.Info("waiting for the raft group", "member", n.raft.IsMember(), "registered", n.raft.Registered(),
				"bootstrap_expect", n.cfg.Cluster.BootstrapExpect, "join", strings.Join(n.cfg.Cluster.Join, ","))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("joining the raft group: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// Stop stops every component and closes Raft, without handing work over
// (a crash looks the same to the others). Drain first for a graceful leave.
func (n *floeNode) Stop() error {
	n.stopOnce.Do(func() {
		if n.cancel != nil {
			n.cancel()
			<-n.done
		}
		n.stopErr = n.raft.Close()
	})
	return n.stopErr
}

// Maintain implements admin.Source.
func (n *floeNode) Maintain(ctx context.Context, name string) (any, error) {
	select {
	case <-n.started:
	default:
		return nil, errors.New("the node is still joining the raft group")
	}
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return nil, fmt.Errorf("%w: table %q: use namespace.name", admin.ErrInvalid, name)
	}
	key := ledger.TableKey(parts)
	// Maintenance runs on the table's committer, its only writer: another
	// node asks the committer.
	var committer, addr string
	n.raft.FSM().Read(func(s *cluster.State) {
		if a, ok := s.Committers[key]; ok {
			committer = a.Node
			if m := s.Nodes[a.Node]; m != nil {
				addr = m.Admin
			}
		}
	})
	if committer != "" && committer != n.cfg.Node.ID && addr != "" {
		return n.peers.maintain(ctx, addr, name) // adminwire.go
	}
	res, err := n.worker.Maintain(ctx, key)
	if errors.Is(err, worker.ErrUnknownTable) {
		return nil, fmt.Errorf("%w: %w", admin.ErrNotFound, err)
	}
	return res, err
}

// Ready implements admin.Source: the node serves once it is a member of a
// group with a leader and its worker runs.
func (n *floeNode) Ready() error {
	select {
	case <-n.started:
	default:
		return errors.New("joining the raft group")
	}
	if addr, _ := n.raft.Leader(); addr == "" {
		return errors.New("no raft leader")
	}
	return nil
}

func trimDLQ(key string) string {
	if len(key) > 4 && key[len(key)-4:] == "_dlq" {
		return key[:len(key)-4]
	}
	return key
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		ti, pi := splitTP(out[i])
		tj, pj := splitTP(out[j])
		if ti != tj {
			return ti < tj
		}
		return pi < pj
	})
	return out
}

func splitTP(s string) (string, int32) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			var p int32
			fmt.Sscan(s[i+1:], &p)
			return s[:i], p
		}
	}
	return s, 0
}
