package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // registers s3:// file IO

	"github.com/floe-io/floe/assignment"
	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/cluster/recovery"
	"github.com/floe-io/floe/cluster/tlsconf"
	"github.com/floe-io/floe/cmd/floe/node/backend"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/localfs"
	"github.com/floe-io/floe/internal/membudget"
	"github.com/floe-io/floe/internal/objstore"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/proto/admin"
	"github.com/floe-io/floe/proto/metrics"
	"github.com/floe-io/floe/proto/notify"
	"github.com/floe-io/floe/sinks/delta"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
	"github.com/floe-io/floe/worker"
	"github.com/floe-io/floe/worker/source"
)

// Node is one running Floe node: every component wired together.
type Node struct {
	// Backend answers the admin API and builds the status report
	// (cmd/floe/node/backend); its methods are the node's.
	*backend.Backend

	cfg     config.Config
	opts    options
	log     *slog.Logger
	raft    *raftnode.Node
	catalog *catalog.Catalog
	sink    *icebergsink.Sink
	worker  *worker.Worker
	// running is the worker once built: Raft's load callback reads it
	// from its own goroutine, before and while the worker is set.
	running atomic.Pointer[worker.Worker]
	admin   *admin.Server
	// adminErr receives the admin server's Serve result.
	adminErr chan error
	backup   *recovery.Backup
	state    stateAdapter
	kafka    *source.KafkaClient
	metrics  *metrics.Metrics
	// catalogs: the REST catalog endpoint and the external catalog mirrors.
	catalogs *catalogParts
	// started is closed once the worker runs; before, the node is joining.
	started chan struct{}
	// dropClasses removes the node's storage-class resolver from objstore
	// (storageclass.go); nil until the worker is built.
	dropClasses func()

	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once
	stopErr  error
}

// IOProps turns the warehouse config into iceberg-go FileIO properties.
func IOProps(w config.Warehouse) iceberg.Properties {
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

// New is the one node builder, for serve, demo, every bench and the tests.
// It opens Raft and the admin server, waits until the node is in a group
// with a leader (bootstrapping or joining as configured), restores the state
// from the warehouse when asked to (WithRecover), and then starts the worker,
// the assignment controller and the state backup. cfg must have passed
// config.Validate; only ctx bounds the wait for the group. A refusal caused
// by the configuration is a *ConfigError.
func New(ctx context.Context, cfg config.Config, opts ...Option) (*Node, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, opts: o, log: o.log, started: make(chan struct{}), done: make(chan struct{})}
	objstore.Install()                                          // count s3:// requests per table, storage classes
	localfs.Install()                                           // file:// locations name files literally (partition paths)
	probeErr := probeWarehouse(ctx, cfg.Warehouse, cfg.Node.ID) // probe.go
	if probeErr != nil {
		n.log.Error("warehouse not writable at start; retrying with backoff", "err", probeErr)
	}
	n.metrics = metrics.New(n, o.version)
	apiOpts, err := adminOptions(cfg, n.metrics, n) // adminwire.go
	if err != nil {
		return nil, err
	}
	if err := n.openRaft(); err != nil {
		return nil, err
	}
	n.Backend = backend.New(backend.Deps{Config: cfg, Log: n.log, Raft: n.raft, AdminTLS: apiOpts.TLS, Started: n.started, History: status.NewHistory()})
	if n.admin, err = admin.ListenAPI(cfg.Node.AdminAddr, n, apiOpts); err != nil {
		n.raft.Close()
		return nil, err
	}
	n.adminErr = make(chan error, 1)
	go func() { n.adminErr <- n.admin.Serve() }()
	if err := n.joinAndRestore(ctx); err != nil {
		return nil, n.abort(err)
	}
	if err := n.buildWorker(); err != nil {
		return nil, n.abort(err)
	}
	if probeErr != nil {
		n.worker.Status().SetGlobal("warehouse", probeErr.Error())
	}
	if w := o.configWarnings; len(w) > 0 {
		n.worker.Status().SetGlobal("config", strings.Join(w, "; "))
	}
	n.backup = recovery.NewBackup(n.raft.FSM(), cfg.Warehouse.Location, IOProps(cfg.Warehouse), n.log)
	n.backup.RecordWith(func(ctx context.Context, c fsm.BackupWritten) (uint64, error) { return n.raft.Apply(ctx, c) })
	if err := n.startCatalogs(); err != nil { // catalogs.go
		return nil, n.abort(err)
	}
	n.Attach(backend.Parts{Worker: n.worker, Catalog: n.catalog, Kafka: n.kafka, CatalogSync: n.catalogs.sync, CatalogURI: n.catalogs.uri})
	n.run(probeErr != nil)
	close(n.started)
	n.log.Info("floe node started", "node", cfg.Node.ID, "raft", cfg.Node.RaftAddr, "rpc", n.raft.RPCAddr(), "admin", n.admin.Addr(), "warehouse", cfg.Warehouse.Location, "version", o.version)
	return n, nil
}

// openRaft opens this node's Raft member. Its load callback reports the
// worker's measured rates for the assignment controller once it runs.
func (n *Node) openRaft() error {
	cfg := n.cfg
	internalTLS, err := loadInternalTLS(cfg.Cluster.TLS, n.log)
	if err != nil {
		return &ConfigError{Err: err} // unreadable or mismatched certificate or key
	}
	rn, err := raftnode.Open(raftnode.NodeConfig{
		ID: cfg.Node.ID, RaftAddr: cfg.Node.RaftAddr, Advertise: cfg.Node.AdvertiseAddr,
		RPCAddr: cfg.Node.RPCAddr, RPCAdvertise: cfg.Node.RPCAdvertise, DataDir: cfg.Node.DataDir,
		BootstrapExpect: cfg.Cluster.BootstrapExpect, Join: cfg.Cluster.Join, MaxVoters: cfg.Cluster.MaxVoters,
		FailureTimeout: cfg.Cluster.FailureTimeout.D(), DeadServerTimeout: cfg.Cluster.DeadServerTimeout.D(),
		Zone: cfg.Node.Zone, Version: n.opts.version, AdminAddr: cfg.Node.AdminAddr, NoSync: n.opts.noSync, Logger: n.log,
		Observer: n.metrics, TLS: internalTLS,
		Load: func() map[string]float64 {
			w := n.running.Load()
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
		return err
	}
	n.raft, n.state = rn, stateAdapter{node: rn, expect: cfg.Cluster.BootstrapExpect}
	return nil
}

// abort undoes a start that failed after the admin server was serving and
// returns err.
func (n *Node) abort(err error) error {
	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = n.admin.Shutdown(sctx)
	scancel()
	<-n.adminErr
	if n.dropClasses != nil {
		n.dropClasses()
	}
	n.raft.Close()
	return err
}

// joinAndRestore waits for the group, then restores the warehouse backup
// (WithRecover) or refuses to start a new group over an old one.
func (n *Node) joinAndRestore(ctx context.Context) error {
	if err := n.waitJoined(ctx); err != nil {
		return err
	}
	if n.opts.recover {
		return n.recoverState(ctx) // drain.go
	}
	if err := n.guardBackup(ctx); err != nil {
		return &ConfigError{Err: err}
	}
	return nil
}

// buildWorker builds the catalog of record, the Iceberg sink, the Kafka
// client and the worker with its schema decoder and dead-letter producer.
func (n *Node) buildWorker() error {
	cfg := n.cfg
	n.catalog = NewCatalog(n.raft, cfg.Warehouse.Location, IOProps(cfg.Warehouse))
	nsLocations := map[string]string{}
	for ns, c := range cfg.Namespaces {
		nsLocations[ns] = strings.TrimSuffix(c.Location, "/")
	}
	sink := icebergsink.New(n.catalog, int64(cfg.TargetFileSize), n.log, nsLocations)
	sink.SetFence(NewFence(n.raft)) // deletions are fenced (docs/internals.md, Maintenance)
	// Upsert tables' key index (docs/upsert.md): derived state, rebuilt
	// from the tables when missing, so it lives beside Raft's files.
	sink.SetKeyIndexPath(filepath.Join(cfg.Node.DataDir, "upsert-keys.db"))
	n.sink = sink
	kc, err := source.NewKafkaClient(cfg.Kafka)
	if err != nil {
		// Building the client connects to nothing: what fails is the
		// kafka section (a TLS key that is not the certificate's, an
		// unsupported SASL mechanism), and each error names its field.
		return &ConfigError{Err: err}
	}
	n.kafka = kc
	// The budget is split once, here, and each share passed to what spends
	// it: the records' to the worker, the fetch share to the Kafka client's
	// queues and the worker's fetch sizes (internal/membudget).
	mem := membudget.Of(int64(cfg.MemoryBudget))
	kc.SetQueueLimit(mem.Fetch)
	n.worker, err = worker.New(worker.Config{
		NodeID: cfg.Node.ID, Tables: cfg.Tables, CommitInterval: cfg.CommitInterval.D(),
		TargetFileSize: cfg.TargetFileSize, Memory: mem,
		MaxNestingDepth: cfg.MaxNestingDepth, MaxColumns: cfg.MaxColumns,
		ExpireInterval: n.opts.expireInterval, OrphanInterval: n.opts.orphanInterval,
		OnCommit: n.metrics.ObserveCommit,
	}, kc, n.state, n.state, sink, status.NewTracker(), n.log)
	if err != nil {
		return err
	}
	if cfg.SchemaRegistry.URL != "" {
		n.worker.SetSchemaDecoder(newSchemaDecoder(cfg.SchemaRegistry)) // schemas.go
	}
	if err := n.wireDeadLetterTopics(cfg); err != nil { // schemas.go
		return err
	}
	// Tables whose mapping names delta get a Delta Lake log beside
	// Iceberg, its follower, published in each commit (docs/internals.md,
	// Commit).
	sink.SetFollower(delta.NewFollower(deltaTables{w: n.worker, n: n.raft}, IOProps(cfg.Warehouse), delta.Options{}, n.log))
	n.running.Store(n.worker)
	n.dropClasses = objstore.AddStorageClasses(newStorageClasses(n.raft.FSM(), n.worker).class) // storageclass.go
	return nil
}

// run starts the node's loops: the assignment controller (leader only),
// notifications, the state backup (leader only) and the worker. When Stop
// cancels them it stops the catalogs and the admin server and closes done.
func (n *Node) run(reprobe bool) {
	cfg, log := n.cfg, n.log
	rctx, rcancel := context.WithCancel(context.Background())
	n.cancel = rcancel
	ctl := assignment.NewController(n.state, log)
	go func() {
		defer close(n.done)
		var wg sync.WaitGroup
		wg.Add(4)
		go func() { // leader only: leadership starts and ends them (STYLE 8)
			defer wg.Done()
			n.raft.RunWhileLeader(rctx, ctl.Run, func(ctx context.Context) { n.backup.Run(ctx, cfg.Cluster.BackupInterval.D()) })
		}()
		go func() { // probe.go
			defer wg.Done()
			if reprobe {
				n.retryProbe(rctx)
			}
		}()
		go func() { defer wg.Done(); n.SampleHistory(rctx) }() // backend/history.go
		go func() {                                            // no-op without a webhook URL
			defer wg.Done()
			notify.New(notify.Config{URL: cfg.Notifications.WebhookURL, Interval: cfg.Notifications.Interval.D(), Log: log.With("component", "notify")}, n).Run(rctx)
		}()
		if err := n.worker.Run(rctx); err != nil {
			log.Error("worker stopped", "err", err)
		}
		wg.Wait()
		n.stopCatalogs()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = n.admin.Shutdown(sctx)
		scancel()
		<-n.adminErr
	}()
}

// Catalog is the node's catalog of record (iceberg-go catalog.Catalog).
func (n *Node) Catalog() *catalog.Catalog { return n.catalog }

// Raft is the node's Raft member and replicated state.
func (n *Node) Raft() *raftnode.Node { return n.raft }

// AdminAddr is the address the admin API listens on (resolved when the
// configuration asked for port 0).
func (n *Node) AdminAddr() string { return n.admin.Addr() }

// ID is the node's configured id.
func (n *Node) ID() string { return n.cfg.Node.ID }

// waitJoined blocks until this node is a registered member of a group with
// a leader. Joining may wait for peers that start later, so only ctx bounds
// it; progress is logged. It polls every 20 ms: a single node is
// registered about a millisecond after its (immediate) election, and the
// start waits here for nothing else.
func (n *Node) waitJoined(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	last := time.Now()
	for {
		if _, leader := n.raft.Leader(); leader != "" && n.raft.IsMember() && n.raft.Registered() && n.registeredAtLeader(ctx) {
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

// registeredAtLeader reports whether this node's membership record is still
// there once the local state has caught up with the leader's: a node
// restarted after it left replays an older state that holds it, and the
// RemoveNode of its leave arrives later (its next RegisterNode after that).
func (n *Node) registeredAtLeader(ctx context.Context) bool {
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return n.raft.Sync(sctx) == nil && n.raft.Registered()
}

// Stop stops every component and closes Raft, without handing work over
// (a crash looks the same to the others). Drain first for a graceful leave.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() {
		if n.cancel != nil {
			n.cancel()
			<-n.done
		}
		if n.dropClasses != nil {
			n.dropClasses()
		}
		if n.sink != nil {
			if err := n.sink.Close(); err != nil { // the commit loops stopped with done
				n.log.Warn("closing the key index", "err", err)
			}
		}
		n.stopErr = n.raft.Close()
	})
	return n.stopErr
}

// loadInternalTLS reads cluster.tls's files or PEM (nil when it is not
// set): a missing or broken file, or PEM that is not a matching set signed
// by the CA for the server name, stops the start here, naming the field.
func loadInternalTLS(t config.ClusterTLS, log *slog.Logger) (*tlsconf.Source, error) {
	if !t.Enabled() {
		return nil, nil
	}
	src, err := tlsconf.Load(tlsconf.Files{
		CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile,
		CAPEM: []byte(t.CAPEM), CertPEM: []byte(t.CertPEM), KeyPEM: []byte(t.KeyPEM),
		ServerName: t.ServerName, VerifyIncoming: t.VerifyIncoming,
	}, log.With("component", "internal-tls"))
	var me *tlsconf.MaterialError
	if errors.As(err, &me) {
		return nil, fmt.Errorf("cluster.tls.%s: %w", me.Field, me.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster.tls: %w", err)
	}
	if t.Inline() {
		log.Info("internal tls from inline PEM: fixed until restart (rotate by rolling restart)")
	}
	return src, nil
}
