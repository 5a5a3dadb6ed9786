package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/internal/retry"
)

// flushJob is one flush: the buffered records and the offset ranges they
// cover, handed from the pipeline goroutine to a flush goroutine.
type flushJob struct {
	id       string
	ranges   []ledger.Range
	buf, dlq []*records.Record
	// tombstones: an upsert table's records in buf that delete their key,
	// by topic/partition (ledger.Entry.Tombstones).
	tombstones map[string][]int64
	bytes      int64
	charged    int64 // budget charge, released once the entry is recorded
	maxTS      int64
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
	job := &flushJob{id: uuid.NewString(), ranges: ranges, dlq: p.dlq, bytes: p.bytes, charged: p.charged, maxTS: p.maxTS}
	job.buf, job.tombstones = p.upsertFlush(p.buf) // upsert.go
	if !p.prepared || p.shape.HasUncommitted() {
		job.prepare, job.shape = true, p.shape.Clone()
		wait = true // later records may depend on the new columns
	}
	// Ranges chain: the next flush starts where this one ends. If this one
	// is refused, resetAll drops everything and restarts from the ledger.
	for _, ps := range p.parts {
		ps.from, ps.maxTS = ps.next, 0
	}
	p.buf, p.dlq, p.bytes, p.maxTS, p.tombs = nil, nil, 0, 0, 0
	p.addCharged(-p.charged) // still held, by the job now
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
	// Recorded (or refused, or abandoned): the records' memory is free.
	p.n.mem.release(job.charged)
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
		p.publishShape() // fields marked committed decode differently
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
	var w jobWrites
	b := retry.New()
	for {
		if ctx.Err() != nil {
			return flushResult{job: job, aborted: true}
		}
		f := p.attempt(ctx, job, &w)
		switch {
		case f == nil:
			var size int64
			for _, fd := range slices.Concat(w.files, w.dlqFiles) {
				size += fd.SizeBytes
			}
			return flushResult{job: job, files: int64(len(w.files) + len(w.dlqFiles)), bytes: size}
		case f.refused:
			return flushResult{job: job, refused: f.err}
		}
		p.log.Warn("flush failed, retrying", "step", f.component, "err", f.err)
		p.status(func(t *status.TableStatus) { t.Problem(f.component, f.err.Error()) })
		if !retry.Sleep(ctx, b.Next()) {
			return flushResult{job: job, aborted: true}
		}
	}
}

// jobWrites is what a flush job has done so far; a retry does not do it
// again.
type jobWrites struct {
	files, dlqFiles []ledger.FileDescriptor
	dlqSent         bool // dead letters produced to the mapping's topic
}

// jobFailure is why one attempt of a flush job failed: component is the
// status component to show it under; refused means the ledger refused
// the entry for good.
type jobFailure struct {
	component string
	err       error
	refused   bool
}

// attempt runs one attempt of a flush job: prepare the table when the
// job needs it, write the files not written yet, produce the dead letters
// to their topic, record the entry. Nil means recorded.
func (p *Pipeline) attempt(ctx context.Context, job *flushJob, w *jobWrites) *jobFailure {
	// Wait for room under the pending cap before writing anything: files
	// written long before they are recorded would look like orphans to the
	// committer's cleanup. A retry after the files were written records
	// them without waiting again.
	if w.files == nil && w.dlqFiles == nil {
		if err := p.waitPending(ctx); err != nil {
			return &jobFailure{component: "ledger", err: err}
		}
	}
	if job.prepare {
		if err := p.prepare(ctx, job); err != nil { // schemareq.go
			component := "schema"
			var ce *committerSchemaError
			if errors.Is(err, sink.ErrConfig) || errors.As(err, &ce) && ce.isConfigIssue() {
				component = "config partitioning"
			}
			return &jobFailure{component: component, err: err}
		}
		p.status(func(t *status.TableStatus) {
			t.Problem("schema", "")
			t.Problem("config partitioning", "")
		})
	}
	if err := p.writeFiles(ctx, job, w); err != nil {
		return &jobFailure{component: "storage", err: err}
	}
	p.status(func(t *status.TableStatus) { t.Problem("storage", "") })
	if err := p.produceDeadLetters(ctx, job, w); err != nil {
		return &jobFailure{component: "dead-letter topic", err: err}
	}
	entry := ledger.Entry{
		ID: job.id, Node: p.n.Config.NodeID, Files: w.files, DLQFiles: w.dlqFiles, Ranges: job.ranges,
		Records: int64(len(job.buf)), DLQ: int64(len(job.dlq)), Bytes: job.bytes,
		WrittenAt: time.Now().UnixMilli(), MaxTimestamp: job.maxTS, Tombstones: job.tombstones,
	}
	err := p.n.Proposer.RecordFiles(ctx, p.spec.Key, entry)
	if err != nil {
		return &jobFailure{component: "ledger", err: err, refused: ledger.Refused(err)}
	}
	return nil
}

// waitPending waits while the table has MaxPending or more pending ledger
// entries in the state this node has applied, before the flush writes its
// files, so a committer that falls
// behind (or is gone) bounds the ledger rather than letting it grow. The
// replicated state does not refuse past the cap: a refusal older nodes do
// not make would split replicas during a rolling upgrade. The job keeps
// its budget charge meanwhile, so the fetchers of the node slow down too.
func (p *Pipeline) waitPending(ctx context.Context) error {
	limit := p.n.Config.MaxPending
	if limit <= 0 {
		limit = DefaultMaxPending
	}
	shown := false
	for {
		changed := p.n.State.WatchTable(p.spec.Key) // before reading: no change is missed
		n := len(p.n.State.Pending(p.spec.Key))
		if n < limit {
			if shown {
				p.status(func(t *status.TableStatus) { t.Problem(problemPending, "") })
			}
			return nil
		}
		if !shown {
			reason := fmt.Sprintf("%d ledger entries wait to be committed (cap %d): flushes wait for the committer", n, limit)
			p.log.Warn("flush waiting for commits", "pending", n, "cap", limit)
			p.status(func(t *status.TableStatus) { t.Problem(problemPending, reason) })
			shown = true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("waiting for pending entries to commit: %w", ctx.Err())
		}
	}
}

// problemPending is the status component a flush waiting on the pending
// cap shows under.
const problemPending = "ledger pending"

// writeFiles writes the job's data file and dead-letter file, each unless
// an earlier attempt wrote it.
func (p *Pipeline) writeFiles(ctx context.Context, job *flushJob, w *jobWrites) error {
	if len(job.buf) > 0 && w.files == nil {
		fs, err := p.n.Sink.Write(ctx, p.spec, job.id, job.buf)
		if err != nil {
			return err
		}
		w.files = fs
	}
	if len(job.dlq) > 0 && w.dlqFiles == nil {
		fs, err := p.n.Sink.WriteDLQ(ctx, p.spec, job.id, job.dlq)
		if err != nil {
			return err
		}
		w.dlqFiles = fs
	}
	return nil
}

// produceDeadLetters also sends dead letters to the mapping's topic before
// the entry is recorded: at least once (a retry after a crash writes them
// again), never lost.
func (p *Pipeline) produceDeadLetters(ctx context.Context, job *flushJob, w *jobWrites) error {
	topic := p.mapping.DeadLetterTopic
	if topic == "" || len(job.dlq) == 0 || w.dlqSent {
		return nil
	}
	if p.n.DeadLetters == nil {
		return errors.New("no dead-letter producer is configured")
	}
	if err := p.n.DeadLetters.Produce(ctx, topic, job.dlq); err != nil {
		return err
	}
	w.dlqSent = true
	p.status(func(t *status.TableStatus) { t.Problem("dead-letter topic", "") })
	return nil
}

// resetAll drops everything buffered and restarts every partition from the
// ledger's end.
func (p *Pipeline) resetAll(ctx context.Context) {
	if p.inflight != nil {
		// A later flush chained on the refused one: wait for it (it will
		// be refused too, or its files become orphans) before resetting.
		res := <-p.inflight
		p.inflight = nil
		p.n.mem.release(res.job.charged)
	}
	p.stopAll()
	p.n.mem.release(p.charged)
	p.addCharged(-p.charged)
	p.buf, p.dlq, p.bytes, p.maxTS, p.tombs = nil, nil, 0, 0, 0
	p.reconcile(ctx)
}
