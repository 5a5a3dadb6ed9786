package worker

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"sync"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/membudget"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/commit"
	"github.com/floe-io/floe/worker/ingest"
	"github.com/floe-io/floe/worker/internal/retry"
)

// Config is what the worker needs from the node's configuration.
type Config struct {
	NodeID         string
	Tables         []config.Table
	CommitInterval time.Duration
	TargetFileSize config.ByteSize
	Memory         membudget.Split // memory_budget, split once by the node
	// MaxPending caps a table's pending ledger entries: a flush waits to
	// record while the table has that many (0: ingest.DefaultMaxPending).
	MaxPending int
	// MaxNestingDepth and MaxColumns are the default limits of a table
	// whose mapping sets none (0: the records package's defaults).
	MaxNestingDepth, MaxColumns int
	// DiscoveryInterval is how often topics are listed (default 10 s).
	DiscoveryInterval time.Duration
	// ExpireInterval is how often a committer expires old snapshots of its
	// tables (default 1 min).
	ExpireInterval time.Duration
	// OrphanInterval is how often a committer deletes orphan files of its
	// tables (default 1 h; the first run is one interval after start).
	OrphanInterval time.Duration
	// ReaderErrorGrace is how long a partition's reader errors must keep
	// coming before the table shows DEGRADED for them (default 15 s).
	ReaderErrorGrace time.Duration
	// OnCommit, if set, is told how long each successful commit of a table
	// took (for the commit latency histogram).
	OnCommit func(table string, d time.Duration)
}

// Worker runs the pipelines and committers of one node.
type Worker struct {
	cfg    Config
	kafka  Kafka
	state  State
	prop   Proposer
	sink   Sink
	status *status.Tracker
	log    *slog.Logger

	mu     sync.Mutex
	routes map[string]route // topic -> route
	// mapped: the tables some mapping routes into now (routes' tables and
	// those of mappings whose topic does not exist yet); nil before the
	// first discovery.
	mapped map[string]bool
	// formatsCh is closed when the routes' formats change (WatchFormats);
	// nil until someone watches.
	formatsCh chan struct{}
	regexes   []*regexp.Regexp // per cfg.Tables index; nil for exact topics
	// rediscover wakes discovery when the API mappings change (cap 1);
	// lastMappings is the list last seen by Run.
	rediscover   chan struct{}
	lastMappings []config.Table
	reMu         sync.Mutex
	reCache      map[string]*regexp.Regexp // regexes of API mappings
	pipelines    map[string]*running
	commits      map[string]bool // tables with a committer loop
	wg           sync.WaitGroup

	// ingest is what the pipelines (worker/ingest) share: dependencies,
	// buffered memory, rates and the drain; committer runs the commit
	// loops (worker/commit).
	ingest    *ingest.Node
	committer *commit.Committer

	// runDone is closed when Run returns, so Drain does not wait for
	// commit loops and pipelines that are gone.
	runDone chan struct{}
	runOnce sync.Once
}

// running is a started pipeline: cancel stops it, done is closed when it
// has; restarting: its mapping changed and it is stopping
// (restartPipeline).
type running struct {
	*ingest.Pipeline
	cancel     context.CancelFunc
	done       chan struct{}
	restarting bool
	handed     *handed // what reconcile last handed it (hand.go)
}

type route struct {
	spec    sink.TableSpec
	mapping config.Table
}

// New returns a worker. Run starts it.
func New(cfg Config, k Kafka, st State, prop Proposer, sink Sink, tracker *status.Tracker, log *slog.Logger) (*Worker, error) {
	if cfg.DiscoveryInterval == 0 {
		cfg.DiscoveryInterval = 10 * time.Second
	}
	if cfg.ExpireInterval == 0 {
		cfg.ExpireInterval = time.Minute
	}
	if cfg.OrphanInterval == 0 {
		cfg.OrphanInterval = time.Hour
	}
	if cfg.ReaderErrorGrace == 0 {
		cfg.ReaderErrorGrace = 15 * time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	w := &Worker{
		cfg: cfg, kafka: k, state: st, prop: prop, sink: sink, status: tracker, log: log.With("node", cfg.NodeID),
		routes: map[string]route{}, pipelines: map[string]*running{}, commits: map[string]bool{},
		runDone:    make(chan struct{}),
		rediscover: make(chan struct{}, 1),
	}
	w.ingest = ingest.NewNode(ingest.Deps{
		Config: ingest.Config{NodeID: cfg.NodeID, CommitInterval: cfg.CommitInterval, TargetFileSize: cfg.TargetFileSize,
			Memory: cfg.Memory, ReaderErrorGrace: cfg.ReaderErrorGrace, MaxPending: cfg.MaxPending,
			MaxNestingDepth: cfg.MaxNestingDepth, MaxColumns: cfg.MaxColumns},
		Kafka: k, State: st, Proposer: prop, Sink: sink, Status: tracker, Log: w.log,
	})
	w.committer = commit.New(commit.Config{
		NodeID: cfg.NodeID, CommitInterval: cfg.CommitInterval, TargetFileSize: cfg.TargetFileSize,
		ExpireInterval: cfg.ExpireInterval, OrphanInterval: cfg.OrphanInterval, OnCommit: cfg.OnCommit,
	}, st, prop, sink, w.lookup, tracker, w.log)
	for i, t := range cfg.Tables {
		var re *regexp.Regexp
		if t.TopicRegex != "" {
			var err error
			if re, err = regexp.Compile(t.TopicRegex); err != nil {
				return nil, fmt.Errorf("tables[%d].topic_regex: %w", i, err)
			}
		}
		w.regexes = append(w.regexes, re)
	}
	return w, nil
}

// MemoryHeld returns the bytes of records the node's memory budget holds
// and its limit.
func (w *Worker) MemoryHeld() (held, limit int64) { return w.ingest.MemoryHeld() }

// Status returns the worker's status collector.
func (w *Worker) Status() *status.Tracker { return w.status }

// Run runs until ctx ends, then stops every goroutine it started.
func (w *Worker) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		w.wg.Wait()
		w.runOnce.Do(func() { close(w.runDone) })
	}()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.discover(ctx)
	}()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.watchSource(ctx) // sourcehealth.go
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		changed := w.state.Watch()
		if m := w.state.Mappings(); !reflect.DeepEqual(m, w.lastMappings) {
			w.lastMappings = m
			select {
			case w.rediscover <- struct{}{}:
			default:
			}
		}
		w.reconcile(ctx)
		last := time.Now()
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			// Every commit changes the state and reconcile reads all of
			// it: changes within reconcileGap of the last pass are
			// handled together, so its cost follows time, not commits.
			if !retry.Sleep(ctx, time.Until(last.Add(reconcileGap))) {
				return nil
			}
		case <-tick.C:
		}
	}
}

// reconcileGap is the least time between two reconcile passes a state
// change prompts (issue 38: at 100 tables reconciling on every commit was
// 4% of a node's CPU, and the cost grows with the square of the tables).
const reconcileGap = 200 * time.Millisecond

// reconcile hands each pipeline its assigned partitions and starts the
// pipelines and committer loops that are missing.
func (w *Worker) reconcile(ctx context.Context) {
	assigned := w.state.Assigned(w.cfg.NodeID)
	w.mu.Lock()
	defer w.mu.Unlock()
	perTable := map[string]map[ledger.TopicPartition]uint64{}
	for tp, epoch := range assigned {
		r, ok := w.routes[tp.Topic]
		if !ok {
			continue // discovery has not routed this topic yet
		}
		if perTable[r.spec.Key] == nil {
			perTable[r.spec.Key] = map[ledger.TopicPartition]uint64{}
		}
		perTable[r.spec.Key][tp] = epoch
	}
	for _, r := range w.routes {
		key := r.spec.Key
		if p, ok := w.pipelines[key]; ok && !p.restarting && !reflect.DeepEqual(p.Mapping(), r.mapping) {
			w.restartPipeline(key, p)
		}
		if _, ok := w.pipelines[key]; !ok {
			w.startPipeline(ctx, r)
		}
		if !w.commits[key] {
			w.commits[key] = true
			w.wg.Add(1)
			go func() {
				defer w.wg.Done()
				w.committer.Run(ctx, key)
			}()
		}
	}
	for key, p := range w.pipelines {
		gen, skips := w.state.Resume(key)
		p.handed = hand(p, p.handed, handed{assign: perTable[key], resumeGen: gen, skips: skips, control: w.state.Control(key)})
	}
}

// startPipeline starts the pipeline of a route's table. Called with w.mu
// held.
func (w *Worker) startPipeline(ctx context.Context, r route) {
	key := r.spec.Key
	// Resumes and rewinds made before the pipeline started concern no
	// suspension of its own; their skips still apply.
	gen, skips := w.state.Resume(key)
	ctl := w.state.Control(key)
	p := &running{
		Pipeline: ingest.NewPipeline(w.ingest, r.spec, r.mapping, ingest.Start{ResumeGen: gen, Skips: skips, RewindGen: ctl.RewindGen, Paused: ctl.Paused, Tables: len(w.routes)}),
		done:     make(chan struct{}),
	}
	pctx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	w.pipelines[key] = p
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer close(p.done)
		p.Run(pctx)
	}()
}

// restartPipeline stops a pipeline whose mapping changed (an update through
// the admin API) and forgets it once it has stopped, so the next reconcile
// starts one with the new mapping from the ledger's end. Records it buffered
// but did not record are fetched again. Called with w.mu held.
func (w *Worker) restartPipeline(key string, p *running) {
	p.restarting = true
	p.cancel()
	w.log.Info("mapping changed: restarting the table's pipeline", "table", ledger.DisplayName(key))
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		<-p.done
		w.mu.Lock()
		if w.pipelines[key] == p {
			delete(w.pipelines, key)
		}
		w.mu.Unlock()
	}()
}

// SetDeadLetterProducer gives the worker the producer of dead-letter topics.
// Call it before Run; tables with a dead_letter_topic need it.
func (w *Worker) SetDeadLetterProducer(p ingest.DeadLetterProducer) { w.ingest.DeadLetters = p }

// SetSchemaDecoder gives the worker the decoder of the Schema Registry
// formats. Call it before Run; without it those tables wait with a
// CONFIG_ISSUE.
func (w *Worker) SetSchemaDecoder(d ingest.SchemaDecoder) { w.ingest.Schemas = d }

// Rates returns the bytes per second (key and value) fetched from each
// partition this node currently fetches, as a moving average with a 30 s
// half-life. A partition that stops receiving decays toward zero. The
// assignment leader uses it to balance partitions by throughput rather
// than by count.
func (w *Worker) Rates() map[ledger.TopicPartition]float64 { return w.ingest.Rates() }
