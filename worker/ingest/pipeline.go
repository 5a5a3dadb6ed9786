package ingest

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/control"
	"github.com/floe-io/floe/worker/internal/retry"
	"github.com/floe-io/floe/worker/phase"
)

// Pipeline buffers the records of one table fetched by this node and flushes
// them as one data file per flush, for all of the node's partitions of the
// table together. One goroutine (Run) owns all of its fields; the Set
// methods hand it news without blocking.
type Pipeline struct {
	n       *Node
	spec    sink.TableSpec
	mapping config.Table
	log     *slog.Logger

	in     chan fetched
	assign chan map[ledger.TopicPartition]uint64 // latest desired partitions; cap 1

	want  map[ledger.TopicPartition]uint64
	parts map[ledger.TopicPartition]*partState
	gen   uint64
	shape *records.Shape
	// shapeVer counts changes of shape; snap is its copy for the
	// fetchers' pre-decoding (predecode.go).
	shapeVer uint64
	snap     atomic.Pointer[shapeSnap]
	buf, dlq []*records.Record
	bytes    int64 // the buffered records' size, towards the target file size
	maxTS    int64
	// tombs counts the buffered tombstones of an upsert table: a flush
	// carries at most ledger.MaxTombstones offsets.
	tombs int
	// charged is the budget charge of the buffered records; buffered
	// mirrors it for the budget's pressure, which runs on fetchers.
	charged  int64
	buffered atomic.Int64
	flushReq chan struct{} // the budget asks for a flush; cap 1
	// backlog: the pipeline flushed for space while well behind its
	// partitions' ends; it flushes once more as soon as it catches up
	// (catchup.go).
	backlog bool

	suspended bool
	// paused by an operator, and the rewind generation last applied; see
	// operate.go.
	paused    bool
	rewindGen uint64
	control   chan control.TableControl // latest control; cap 1
	// suspendedAt is the record a suspend stopped at.
	suspendedAt *ledger.Range
	// resumeGen is the table's replicated resume generation last seen: a
	// larger one resumes a suspended or paused table. skips are the records
	// an operator resumed the table past (offset by partition); see resume.go.
	resumeGen uint64
	skips     map[ledger.TopicPartition]int64
	resumed   chan resumeState // latest resume state; cap 1
	// Registry formats: schema ids already merged into shape (keys' ids
	// negated), the record held while the registry is unavailable, and the
	// topics paused by an incompatible schema (topic -> reason).
	schemas      map[int]bool
	schemaLimits map[int]error // schemas refused by the table's limits (keyed as schemas)
	held         *fetched
	heldUntil    time.Time
	holdBackoff  *retry.Backoff
	registryDown bool
	pausedTopics map[string]string
	inflight     chan flushResult // the flush in flight, nil when none
	// prepared: the table has been created and its spec checked against
	// the mapping since the pipeline started.
	prepared bool
	// drained is closed once the pipeline has stopped fetching for good and
	// its buffer is flushed and recorded (or refused); see drain.go.
	drained     chan struct{}
	drainClosed bool
	// table is the pipeline's status entry, made on first use (a table
	// shows in status only once something happened to it). Updating it
	// takes only the table's lock, never a node-wide one: handle counts
	// every record through it.
	table func() *status.Table
	// unpublished is consumed and not yet in status (burst.go).
	unpublished consumedCounts
}

// Start is where a new pipeline begins: the table's resume generation and
// skips, and its rewind generation and pause, as the replicated state
// shows them when it starts. Resumes and rewinds made before it started
// concern no suspension of its own (it starts from the ledger anyway);
// their skips still apply.
type Start struct {
	ResumeGen uint64
	Skips     map[ledger.TopicPartition]int64
	RewindGen uint64
	Paused    bool
	// Tables is how many pipelines the node runs with this one (its
	// worker's routed tables), 0 when unknown. It sizes the queue beside
	// the pipelines already made: a node that starts 1,000 at once would
	// otherwise give the first ones the large queues of a node of few
	// tables (71 MB of queues at 1,000 tables instead of ~25).
	Tables int
}

// NewPipeline returns the pipeline of one table; Run runs it.
func NewPipeline(n *Node, spec sink.TableSpec, m config.Table, start Start) *Pipeline {
	live := max(n.pipelines.Add(1), int64(start.Tables)) // this one included; Run's end takes it back
	return &Pipeline{
		n: n, spec: spec, mapping: m,
		resumeGen: start.ResumeGen, skips: start.Skips, rewindGen: start.RewindGen, paused: start.Paused,
		log:      n.Log.With("table", ledger.DisplayName(spec.Key)),
		in:       make(chan fetched, inQueueSize(live)),
		assign:   make(chan map[ledger.TopicPartition]uint64, 1),
		resumed:  make(chan resumeState, 1),
		control:  make(chan control.TableControl, 1),
		flushReq: make(chan struct{}, 1),
		parts:    map[ledger.TopicPartition]*partState{},
		drained:  make(chan struct{}),
		table: sync.OnceValue(func() *status.Table {
			return n.Status.Table(spec.Key, ledger.DisplayName(spec.Key))
		}),
	}
}

// Spec returns the table the pipeline writes.
func (p *Pipeline) Spec() sink.TableSpec { return p.spec }

// Mapping returns the mapping the pipeline was started with.
func (p *Pipeline) Mapping() config.Table { return p.mapping }

// Drained is closed once the pipeline has stopped fetching for good and
// its buffer is flushed and recorded (or refused), after Node.Drain.
func (p *Pipeline) Drained() <-chan struct{} { return p.drained }

// SetAssignment hands the pipeline its latest desired partitions without
// blocking: an older undelivered assignment is replaced.
func (p *Pipeline) SetAssignment(want map[ledger.TopicPartition]uint64) {
	for {
		select {
		case p.assign <- want:
			return
		default:
		}
		select {
		case <-p.assign:
		default:
		}
	}
}

// SetControl hands the pipeline the table's latest control without
// blocking: an older undelivered one is replaced.
func (p *Pipeline) SetControl(c control.TableControl) {
	for {
		select {
		case p.control <- c:
			return
		default:
		}
		select {
		case <-p.control:
		default:
		}
	}
}

func (p *Pipeline) status(fn func(*status.TableStatus)) {
	p.table().Update(fn)
}

func (p *Pipeline) Run(ctx context.Context) {
	p.n.register(p)
	defer func() {
		if p.inflight != nil {
			res := <-p.inflight // ctx is done: the flush goroutine returns promptly
			p.inflight = nil
			p.n.mem.release(res.job.charged)
		}
		p.stopAll()
		p.status(func(t *status.TableStatus) { t.Held = nil }) // nothing is held by a pipeline that is gone
		p.n.partitions.Add(-int64(len(p.want)))
		p.n.unregister(p)
		p.n.pipelines.Add(-1)
		p.releaseQueued()
	}()
	if !p.loadShape(ctx) {
		return
	}
	// Flushes fall on the table's slots (worker/phase): spread over the
	// interval across tables, together across the nodes of one table.
	interval := p.n.Config.CommitInterval
	offset := phase.Offset(p.spec.Key, interval)
	tick := time.NewTimer(phase.UntilSlot(time.Now(), interval, offset))
	defer tick.Stop()
	retry := lazyRetry{t: time.NewTimer(time.Second), armed: true}
	defer retry.t.Stop()
	drain := p.n.drainCh // nil once handled: a closed channel is always ready
	for {
		in := p.in
		if p.held != nil {
			in = nil // nothing more until the held record decodes
		}
		select {
		case <-ctx.Done():
			return
		case <-drain:
			drain = nil
			p.drain(ctx)
		case want := <-p.assign:
			// The node's partition count sizes the fetches of the readers
			// started from now on.
			p.n.partitions.Add(int64(len(want) - len(p.want)))
			p.want = want
			p.reconcile(ctx)
		case rs := <-p.resumed:
			p.applyResume(ctx, rs)
		case c := <-p.control:
			p.applyControl(ctx, c)
		case f := <-in:
			p.handleBurst(ctx, f)
		case res := <-p.inflight:
			p.finish(ctx, res)
		case <-tick.C:
			p.flush(ctx, false)
			tick.Reset(phase.UntilSlot(time.Now(), interval, offset))
		case <-p.flushReq:
			p.noteFlushForSpace(len(p.buf) + len(p.dlq))
			p.flush(ctx, false)
		case <-retry.wait(p.held != nil || len(p.parts) != len(p.want)):
			retry.armed = false
			p.retryHeld(ctx)
			// Partitions whose start offset could not be resolved yet.
			if len(p.parts) != len(p.want) {
				p.reconcile(ctx)
			}
		}
	}
}

// lazyRetry is the pipeline's one-second retry timer, running only while
// something waits for it (a held record, partitions whose start offset is
// not resolved yet). A ticker woke every quiet pipeline each second for
// nothing: a thousand wake-ups a second, each a select over ten channels,
// on a node of a thousand tables (issue 38).
type lazyRetry struct {
	t     *time.Timer
	armed bool // started and not yet received from
}

// wait is the channel to select on: the timer's, started if need be, or
// nil (never ready) when nothing waits for a retry.
func (r *lazyRetry) wait(wanted bool) <-chan time.Time {
	if !wanted {
		return nil
	}
	if !r.armed {
		r.t.Reset(time.Second)
		r.armed = true
	}
	return r.t.C
}

// requestFlush asks the pipeline to flush its buffer, without blocking.
func (p *Pipeline) requestFlush() {
	select {
	case p.flushReq <- struct{}{}:
	default:
	}
}

// addCharged moves a budget charge into (or, negative, out of) the buffer.
func (p *Pipeline) addCharged(n int64) {
	p.charged += n
	p.buffered.Store(p.charged)
}

// releaseQueued gives back, once the pipeline has stopped and its
// fetchers with it, the charge of its buffer, of the record it held and of
// the records still queued for it.
func (p *Pipeline) releaseQueued() {
	p.n.mem.release(p.charged)
	p.addCharged(-p.charged)
	if p.held != nil {
		p.n.mem.release(p.held.cost)
		p.held = nil
	}
	for {
		select {
		case f := <-p.in:
			p.n.mem.release(f.cost)
		default:
			return
		}
	}
}

// loadShape reads the table's current columns, retrying while storage or
// the catalog is unavailable.
func (p *Pipeline) loadShape(ctx context.Context) bool {
	if p.spec.Format == "raw" {
		return true
	}
	b := retry.New()
	for {
		s, err := p.n.Sink.Shape(ctx, p.spec)
		if err == nil {
			if s == nil {
				s = &records.Shape{Kind: records.Struct}
			}
			p.shape = s
			p.publishShape()
			p.status(func(t *status.TableStatus) { t.Problem("catalog", "") })
			return true
		}
		p.log.Warn("loading table schema", "err", err)
		p.status(func(t *status.TableStatus) { t.Problem("catalog", err.Error()) })
		if !p.sleepUndrained(ctx, b.Next()) {
			return false
		}
	}
}
