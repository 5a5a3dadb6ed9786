package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/ledger"
	"github.com/floe-io/floe/records"
	"github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/status"
	"github.com/floe-io/floe/worker/control"
	"github.com/floe-io/floe/worker/internal/retry"
	"github.com/floe-io/floe/worker/source"
)

// fetched is one message (or reader failure) from a partition fetcher.
type fetched struct {
	tp  ledger.TopicPartition
	gen uint64
	msg source.Message
}

// partState is one partition this node fetches for a table.
type partState struct {
	tp    ledger.TopicPartition
	epoch uint64
	gen   uint64 // fetcher generation: messages of older ones are ignored
	from  int64  // ledger end: where the next recorded range starts
	next  int64  // next offset after the last consumed record
	maxTS int64  // newest record time (unix ms) in [from, next)
	stop  context.CancelFunc
	done  chan struct{}
	meter *meter // fetched bytes, for Rates
	// stopped: the fetcher has ended (Drain stops fetchers but keeps the
	// partition's offsets so its buffered records can still be flushed).
	stopped bool
}

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

	want     map[ledger.TopicPartition]uint64
	parts    map[ledger.TopicPartition]*partState
	gen      uint64
	shape    *records.Shape
	buf, dlq []*records.Record
	bytes    int64
	maxTS    int64

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
}

// NewPipeline returns the pipeline of one table; Run runs it.
func NewPipeline(n *Node, spec sink.TableSpec, m config.Table, start Start) *Pipeline {
	return &Pipeline{
		n: n, spec: spec, mapping: m,
		resumeGen: start.ResumeGen, skips: start.Skips, rewindGen: start.RewindGen, paused: start.Paused,
		log:     n.Log.With("table", ledger.DisplayName(spec.Key)),
		in:      make(chan fetched, 4096),
		assign:  make(chan map[ledger.TopicPartition]uint64, 1),
		resumed: make(chan resumeState, 1),
		control: make(chan control.TableControl, 1),
		parts:   map[ledger.TopicPartition]*partState{},
		drained: make(chan struct{}),
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
	defer func() {
		if p.inflight != nil {
			<-p.inflight // ctx is done: the flush goroutine returns promptly
			p.inflight = nil
		}
		p.stopAll()
	}()
	if !p.loadShape(ctx) {
		return
	}
	tick := time.NewTicker(p.n.Config.CommitInterval)
	defer tick.Stop()
	retry := time.NewTicker(time.Second)
	defer retry.Stop()
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
			p.want = want
			p.reconcile(ctx)
		case rs := <-p.resumed:
			p.applyResume(ctx, rs)
		case c := <-p.control:
			p.applyControl(ctx, c)
		case f := <-in:
			p.handle(ctx, f)
		case res := <-p.inflight:
			p.finish(ctx, res)
		case <-tick.C:
			p.flush(ctx, false)
		case <-retry.C:
			p.retryHeld(ctx)
			// Partitions whose start offset could not be resolved yet.
			if len(p.parts) != len(p.want) {
				p.reconcile(ctx)
			}
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

// reconcile starts and stops fetchers so that exactly the wanted partitions,
// at the wanted epochs, are fetched.
func (p *Pipeline) reconcile(ctx context.Context) {
	for tp, ps := range p.parts {
		if e, ok := p.want[tp]; !ok || e != ps.epoch {
			p.stopPartition(ps)
			p.dropBuffered(tp)
			delete(p.parts, tp)
			p.status(func(t *status.TableStatus) { delete(t.Partitions, tp.String()) })
		}
	}
	// A draining worker never fetches again, whatever the state assigns.
	if p.suspended || p.paused || p.n.draining.Load() {
		return
	}
	var missing []ledger.TopicPartition
	for tp := range p.want {
		if _, paused := p.pausedTopics[tp.Topic]; paused {
			continue
		}
		if _, ok := p.parts[tp]; !ok {
			missing = append(missing, tp)
		}
	}
	if len(missing) == 0 {
		return
	}
	starts, err := p.startOffsets(ctx, missing)
	if err != nil {
		p.log.Warn("resolving start offsets", "err", err)
		p.status(func(t *status.TableStatus) { t.Problem("kafka", err.Error()) })
	}
	for _, tp := range missing {
		from, ok := starts[tp]
		if !ok {
			continue
		}
		p.startPartition(ctx, tp, p.want[tp], from)
	}
}

// startOffsets returns where each partition resumes: the ledger's end when
// the table knows the partition, else the mapping's start offset in Kafka.
func (p *Pipeline) startOffsets(ctx context.Context, tps []ledger.TopicPartition) (map[ledger.TopicPartition]int64, error) {
	out := map[ledger.TopicPartition]int64{}
	unknown := map[string][]int32{}
	for _, tp := range tps {
		if o, ok := p.n.State.Position(p.spec.Key, tp); ok {
			out[tp] = o.End
		} else {
			unknown[tp.Topic] = append(unknown[tp.Topic], tp.Partition)
		}
	}
	var firstErr error
	for topic, parts := range unknown {
		offs, err := p.n.Kafka.Offsets(ctx, topic, parts, p.mapping.StartOffset == "latest")
		if err != nil && firstErr == nil {
			firstErr = err
		}
		for part, off := range offs {
			out[ledger.TopicPartition{Topic: topic, Partition: part}] = off
		}
	}
	return out, firstErr
}

func (p *Pipeline) startPartition(ctx context.Context, tp ledger.TopicPartition, epoch uint64, from int64) {
	p.gen++
	fctx, cancel := context.WithCancel(ctx)
	ps := &partState{tp: tp, epoch: epoch, gen: p.gen, from: from, next: from, stop: cancel, done: make(chan struct{}),
		meter: p.n.rates.acquire(tp)}
	p.parts[tp] = ps
	p.status(func(t *status.TableStatus) {
		t.Partitions[tp.String()] = &status.PartitionStatus{Topic: tp.Topic, Partition: tp.Partition, Epoch: epoch, Fetched: from}
	})
	p.log.Info("fetching partition", "partition", tp.String(), "epoch", epoch, "from", from)
	// kafka-go retries reader errors itself; a single one (an i/o timeout
	// on an idle partition's long poll) is not worth a DEGRADED table. Only
	// errors that keep coming for ReaderErrorGrace are shown as a problem;
	// an unreachable broker shows at once through discovery anyway.
	onError := func(err error) {
		p.status(func(t *status.TableStatus) {
			ps, ok := t.Partitions[tp.String()]
			if !ok {
				return
			}
			now := time.Now()
			if ps.LastError == "" {
				ps.ErrorSince = now
			}
			ps.LastError, ps.LastErrorAt = err.Error(), now
			// A long poll timing out on a caught-up, idle partition is
			// what kafka-go reports against some brokers; nothing is
			// waiting to be read, so it is not a problem.
			idle := ps.HighWatermark > 0 && ps.Fetched >= ps.HighWatermark && strings.Contains(err.Error(), "i/o timeout")
			if !idle && now.Sub(ps.ErrorSince) >= p.n.Config.ReaderErrorGrace {
				t.Problem("kafka "+tp.String(), err.Error())
			}
		})
	}
	r := p.n.Kafka.NewReader(tp, from, onError)
	go p.fetch(fctx, ps.gen, tp, r, ps.done)
}

func (p *Pipeline) fetch(ctx context.Context, gen uint64, tp ledger.TopicPartition, r source.PartitionReader, done chan struct{}) {
	defer close(done)
	defer r.Close()
	b := retry.New()
	for {
		m, err := r.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			p.log.Warn("fetching", "partition", tp.String(), "err", err)
			if !retry.Sleep(ctx, b.Next()) {
				return
			}
			continue
		}
		b.Reset()
		select {
		case p.in <- fetched{tp: tp, gen: gen, msg: m}:
		case <-ctx.Done():
			return
		}
	}
}

// stopPartition stops a partition's fetcher and waits for it; stopping it
// again is a no-op.
func (p *Pipeline) stopPartition(ps *partState) {
	if ps.stopped {
		return
	}
	ps.stop()
	<-ps.done
	ps.stopped = true
	p.n.rates.release(ps.meter)
}

func (p *Pipeline) stopAll() {
	for tp, ps := range p.parts {
		p.stopPartition(ps)
		delete(p.parts, tp)
	}
}

// dropBuffered forgets the unrecorded records of a partition this node no
// longer holds; its new holder fetches them again from the ledger's end.
func (p *Pipeline) dropBuffered(tp ledger.TopicPartition) {
	keep := func(rs []*records.Record) []*records.Record {
		return slices.DeleteFunc(rs, func(r *records.Record) bool {
			if r.Topic == tp.Topic && r.Partition == tp.Partition {
				p.bytes -= r.Mem
				p.n.mem.Add(-r.Mem)
				return true
			}
			return false
		})
	}
	p.buf, p.dlq = keep(p.buf), keep(p.dlq)
}

// handle decodes one fetched record into the buffer.
func (p *Pipeline) handle(ctx context.Context, f fetched) {
	ps, ok := p.parts[f.tp]
	if !ok || ps.gen != f.gen || p.suspended || f.msg.Offset < ps.next {
		return // from a stopped fetcher, or already consumed
	}
	m := f.msg
	rec := &records.Record{Topic: f.tp.Topic, Partition: f.tp.Partition, Offset: m.Offset, Timestamp: m.Time, Key: m.Key, Headers: m.Headers}
	var decodeErr error
	tombstone, operatorSkip := false, false
	switch {
	case p.operatorSkip(f.tp, m.Offset):
		// A record an operator resumed the table past (replicated, so
		// whichever node fetches it skips it until the table commits past).
		operatorSkip = true
	case p.spec.Format == "raw":
		rec.Raw = m.Value
	case len(m.Value) == 0:
		tombstone = true
	case p.spec.Format == "json":
		if v, err := decodeJSON(p.shape, m.Value); err != nil {
			decodeErr = err
		} else {
			rec.Value = v
		}
	default:
		switch out, err := p.decodeSchema(ctx, f.tp, m, rec); out {
		case held:
			p.hold(f, err)
			return
		case paused:
			p.pauseTopic(ctx, f.tp, m.Offset, err)
			return
		default:
			decodeErr = err
		}
	}
	size := rec.Size() + int64(len(m.Value))
	switch {
	case tombstone && p.mapping.Tombstones == "dlq":
		rec.Err = "tombstone: the record's value is null"
		p.dlq = append(p.dlq, rec)
		p.status(func(t *status.TableStatus) { t.Tombstones++; t.DeadLettered++ })
	case tombstone:
		p.status(func(t *status.TableStatus) { t.Tombstones++ })
		rec = nil
	case operatorSkip:
		p.log.Info("skipping a record the table was resumed past", "partition", f.tp.String(), "offset", m.Offset)
		p.status(func(t *status.TableStatus) { t.Skipped++ })
		rec = nil
	case decodeErr != nil:
		switch p.mapping.ErrorMode {
		case "skip":
			p.log.Debug("skipping bad record", "partition", f.tp.String(), "offset", m.Offset, "err", decodeErr)
			p.status(func(t *status.TableStatus) { t.Skipped++ })
			rec = nil
		case "suspend":
			p.suspend(ctx, f.tp, m.Offset, decodeErr)
			return
		default: // log (dlq)
			rec.Raw, rec.Err, rec.Value = m.Value, decodeErr.Error(), nil
			p.dlq = append(p.dlq, rec)
			p.status(func(t *status.TableStatus) { t.DeadLettered++ })
		}
	default:
		p.buf = append(p.buf, rec)
	}
	if rec != nil {
		rec.Mem = size
		p.bytes += size
		p.n.mem.Add(size)
	}
	ps.next = m.Offset + 1
	ps.meter.add(int64(len(m.Key) + len(m.Value)))
	if ms := m.Time.UnixMilli(); ms > p.maxTS {
		p.maxTS = ms
	}
	ps.maxTS = max(ps.maxTS, m.Time.UnixMilli())
	p.status(func(t *status.TableStatus) {
		t.Consumed++
		t.BytesConsumed += int64(len(m.Key) + len(m.Value))
		if s, ok := t.Partitions[f.tp.String()]; ok {
			s.Fetched = ps.next
			s.HighWatermark = max(s.HighWatermark, m.HighWatermark)
			if s.LastError != "" {
				s.LastError, s.ErrorSince = "", time.Time{}
				t.Problem("kafka "+f.tp.String(), "")
			}
		}
	})
	if p.bytes >= int64(p.n.Config.TargetFileSize) || p.n.mem.Load() > int64(p.n.Config.MemoryBudget) {
		p.flush(ctx, false)
	}
}

// suspend stops the table at a bad record: what came before it is flushed,
// nothing after it is consumed until an operator intervenes.
func (p *Pipeline) suspend(ctx context.Context, tp ledger.TopicPartition, offset int64, err error) {
	p.flush(ctx, true)
	p.suspended = true
	p.suspendedAt = &ledger.Range{TopicPartition: tp, From: offset, To: offset + 1}
	p.stopAll()
	reason := fmt.Sprintf("bad record at %s offset %d: %v", tp, offset, err)
	p.log.Error("table suspended", "reason", reason)
	p.status(func(t *status.TableStatus) {
		t.State, t.Reason = status.StateSuspended, reason
		t.SuspendedAt = &status.SuspendedRecord{Topic: tp.Topic, Partition: tp.Partition, Offset: offset, Error: err.Error()}
	})
}

// flushJob is one flush: the buffered records and the offset ranges they
// cover, handed from the pipeline goroutine to a flush goroutine.
type flushJob struct {
	id       string
	ranges   []ledger.Range
	buf, dlq []*records.Record
	bytes    int64
	maxTS    int64
	// prepare is set when the table must be created, its columns grown or
	// its partition spec checked; shape is then a copy of the live shape.
	prepare bool
	shape   *records.Shape
	// requested: the schema change was requested from the committer (by
	// the flush goroutine, which owns the job while it runs).
	requested bool
}

type flushResult struct {
	job     *flushJob
	files   int64
	bytes   int64 // size of the files written
	refused error // the ledger refused the entry for good
	aborted bool  // ctx ended before the entry was recorded
}

// flush hands the buffered records to a flush goroutine: one data file for
// the table (and one for its dead-letter table) and one ledger entry. While
// it runs, the pipeline keeps decoding into a fresh buffer, so decoding and
// Parquet encoding overlap on separate cores. At most one flush is in
// flight; a flush that changes the schema, and any flush with wait set,
// completes before flush returns.
func (p *Pipeline) flush(ctx context.Context, wait bool) {
	if p.inflight != nil {
		p.await(ctx)
	}
	var ranges []ledger.Range
	for _, ps := range p.parts {
		if ps.next > ps.from {
			ranges = append(ranges, ledger.Range{TopicPartition: ps.tp, From: ps.from, To: ps.next, Epoch: ps.epoch, MaxTS: ps.maxTS})
		}
	}
	if len(ranges) == 0 {
		return
	}
	slices.SortFunc(ranges, func(a, b ledger.Range) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
	job := &flushJob{id: uuid.NewString(), ranges: ranges, buf: p.buf, dlq: p.dlq, bytes: p.bytes, maxTS: p.maxTS}
	if !p.prepared || p.shape.HasUncommitted() {
		job.prepare, job.shape = true, p.shape.Clone()
		wait = true // later records may depend on the new columns
	}
	// Ranges chain: the next flush starts where this one ends. If this one
	// is refused, resetAll drops everything and restarts from the ledger.
	for _, ps := range p.parts {
		ps.from, ps.maxTS = ps.next, 0
	}
	p.buf, p.dlq, p.bytes, p.maxTS = nil, nil, 0, 0
	done := make(chan flushResult, 1)
	p.inflight = done
	go func() { done <- p.runJob(ctx, job) }()
	if wait {
		p.await(ctx)
	}
}

// await waits for the flush in flight and applies its result.
func (p *Pipeline) await(ctx context.Context) {
	res := <-p.inflight
	p.finish(ctx, res)
}

// finish applies a flush result in the pipeline goroutine.
func (p *Pipeline) finish(ctx context.Context, res flushResult) {
	p.inflight = nil
	job := res.job
	p.n.mem.Add(-job.bytes)
	switch {
	case res.aborted:
		return
	case res.refused != nil:
		// Fenced or out of step: the job's files are orphans now. Start
		// over from what the ledger holds.
		p.log.Warn("ledger refused flush; resuming from the ledger", "err", res.refused)
		p.resetAll(ctx)
		return
	}
	if job.prepare {
		commitFields(p.shape, job.shape)
		if job.shape != nil && p.shape != nil {
			p.shape.CommittedSchemaID = max(p.shape.CommittedSchemaID, job.shape.SchemaID)
		}
		p.prepared = true
	}
	p.status(func(t *status.TableStatus) {
		t.Flushes++
		t.FilesWritten += res.files
		t.BytesWritten += res.bytes
		t.LastFlush = time.Now()
		t.Problem("ledger", "")
	})
}

// commitFields marks committed every field of live that the table now has
// (those in prepared, which was created or evolved into the table).
func commitFields(live, prepared *records.Shape) {
	if live == nil || prepared == nil {
		return
	}
	for _, pf := range prepared.Fields {
		if lf := live.Lookup(pf.Name); lf != nil {
			lf.Committed = true
			commitFields(lf.Shape, pf.Shape)
		}
	}
	if live.Elem != nil && prepared.Elem != nil {
		commitFields(live.Elem, prepared.Elem)
	}
}

// runJob writes and records one flush, retrying failures with backoff until
// it succeeds, the ledger refuses the entry, or ctx ends. It runs on its own
// goroutine and touches no pipeline state.
func (p *Pipeline) runJob(ctx context.Context, job *flushJob) flushResult {
	var files, dlqFiles []ledger.FileDescriptor
	dlqSent := false
	b := retry.New()
	fail := func(component string, err error) bool {
		p.log.Warn("flush failed, retrying", "step", component, "err", err)
		p.status(func(t *status.TableStatus) { t.Problem(component, err.Error()) })
		return retry.Sleep(ctx, b.Next())
	}
	for {
		if ctx.Err() != nil {
			return flushResult{job: job, aborted: true}
		}
		if job.prepare {
			if err := p.prepare(ctx, job); err != nil { // schemareq.go
				component := "schema"
				var ce *committerSchemaError
				if errors.Is(err, sink.ErrConfig) || errors.As(err, &ce) && ce.isConfigIssue() {
					component = "config partitioning"
				}
				if !fail(component, err) {
					return flushResult{job: job, aborted: true}
				}
				continue
			}
			p.status(func(t *status.TableStatus) {
				t.Problem("schema", "")
				t.Problem("config partitioning", "")
			})
		}
		if len(job.buf) > 0 && files == nil {
			fs, err := p.n.Sink.Write(ctx, p.spec, job.id, job.buf)
			if err != nil {
				if !fail("storage", err) {
					return flushResult{job: job, aborted: true}
				}
				continue
			}
			files = fs
		}
		if len(job.dlq) > 0 && dlqFiles == nil {
			fs, err := p.n.Sink.WriteDLQ(ctx, p.spec, job.id, job.dlq)
			if err != nil {
				if !fail("storage", err) {
					return flushResult{job: job, aborted: true}
				}
				continue
			}
			dlqFiles = fs
		}
		p.status(func(t *status.TableStatus) { t.Problem("storage", "") })
		// Dead letters also go to the mapping's topic before the entry is
		// recorded: at least once (a retry after a crash writes them again),
		// never lost.
		if topic := p.mapping.DeadLetterTopic; topic != "" && len(job.dlq) > 0 && !dlqSent {
			if p.n.DeadLetters == nil {
				if !fail("dead-letter topic", errors.New("no dead-letter producer is configured")) {
					return flushResult{job: job, aborted: true}
				}
				continue
			}
			if err := p.n.DeadLetters.Produce(ctx, topic, job.dlq); err != nil {
				if !fail("dead-letter topic", err) {
					return flushResult{job: job, aborted: true}
				}
				continue
			}
			dlqSent = true
			p.status(func(t *status.TableStatus) { t.Problem("dead-letter topic", "") })
		}
		entry := ledger.Entry{
			ID: job.id, Node: p.n.Config.NodeID, Files: files, DLQFiles: dlqFiles, Ranges: job.ranges,
			Records: int64(len(job.buf)), DLQ: int64(len(job.dlq)), Bytes: job.bytes,
			WrittenAt: time.Now().UnixMilli(), MaxTimestamp: job.maxTS,
		}
		err := p.n.Proposer.RecordFiles(ctx, p.spec.Key, entry)
		if err != nil && ledger.Refused(err) {
			return flushResult{job: job, refused: err}
		}
		if err != nil {
			if !fail("ledger", err) {
				return flushResult{job: job, aborted: true}
			}
			continue
		}
		var size int64
		for _, f := range slices.Concat(files, dlqFiles) {
			size += f.SizeBytes
		}
		return flushResult{job: job, files: int64(len(files) + len(dlqFiles)), bytes: size}
	}
}

// resetAll drops everything buffered and restarts every partition from the
// ledger's end.
func (p *Pipeline) resetAll(ctx context.Context) {
	if p.inflight != nil {
		// A later flush chained on the refused one: wait for it (it will
		// be refused too, or its files become orphans) before resetting.
		res := <-p.inflight
		p.inflight = nil
		p.n.mem.Add(-res.job.bytes)
	}
	p.stopAll()
	p.n.mem.Add(-p.bytes)
	p.buf, p.dlq, p.bytes, p.maxTS = nil, nil, 0, 0
	p.reconcile(ctx)
}
