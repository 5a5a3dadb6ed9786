package ingest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/worker/internal/retry"
	"github.com/floe-io/floe/worker/source"
)

// fetched is one message (or reader failure) from a partition fetcher.
// The queue between a pipeline's fetchers and its loop. One table drained
// alone gets maxInQueue slots (bursts of a fast drain, burst.go); with many
// tables the slots are shared out, at least minInQueue each. A slot is a
// fetched value and a channel's buffer is allocated whole, so 4,096 slots
// for each of 300 quiet tables held 223 MB, most of the node's memory
// (issue 38, the heap profile of floe bench --tables 300), and at 1,000
// tables 256 slots each still held 97 MB (~380 bytes a slot). A burst
// takes every record queued (burst.go), so a busy table among many pays a
// wake-up per 64 records at worst, not a slower drain.
const (
	maxInQueue    = 4096
	minInQueue    = 64
	inQueueShared = 64 << 10 // slots over all pipelines, once each is below maxInQueue
)

// inQueueSize is the queue of a pipeline made while live pipelines exist
// (itself included).
func inQueueSize(live int64) int {
	return int(min(maxInQueue, max(minInQueue, inQueueShared/max(live, 1))))
}

type fetched struct {
	tp   ledger.TopicPartition
	gen  uint64
	msg  source.Message
	cost int64 // taken from the budget by the fetcher (budget.go)
	// fits: the fetcher found the JSON value to fit the columns of shape
	// version preVer as they are (predecode.go, jsoncheck.go).
	fits   bool
	preVer uint64
	// pre: the fetcher decoded the registry-format record (predecode.go).
	pre *preDecoded
}

// partState is one partition this node fetches for a table.
type partState struct {
	tp    ledger.TopicPartition
	epoch uint64
	gen   uint64 // fetcher generation: messages of older ones are ignored
	from  int64  // ledger end: where the next recorded range starts
	next  int64  // next offset after the last consumed record
	maxTS int64  // newest record time (unix ms) in [from, next)
	// hw is the partition's end as its reader last saw it (the last
	// stable offset): next reaching it means caught up (catchup.go).
	hw    int64
	stop  context.CancelFunc
	done  chan struct{}
	meter *meter // fetched bytes, for Rates
	// stopped: the fetcher has ended (Drain stops fetchers but keeps the
	// partition's offsets so its buffered records can still be flushed).
	stopped bool
	// statusDirty: its fetched offset moved since status last showed it
	// (burst.go).
	statusDirty bool
}

// reconcile starts and stops fetchers so that exactly the wanted partitions,
// at the wanted epochs, are fetched.
func (p *Pipeline) reconcile(ctx context.Context) {
	defer p.noteHeld()
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
			// A broker's error (unreachable, silent) is shown once per
			// table by the worker's source health, naming the broker, not
			// once per partition here.
			broker := errors.Is(err, source.ErrBroker)
			if !idle && !broker && now.Sub(ps.ErrorSince) >= p.n.Config.ReaderErrorGrace {
				t.Problem("kafka "+tp.String(), err.Error())
			}
		})
	}
	// The fetch size is the budget's share per partition as the node's
	// assignment stands now; readers started later get the size for the
	// assignment then.
	r := p.n.Kafka.NewReader(tp, from, p.n.fetchBytes(p.n.partitions.Load()), onError)
	go p.fetch(fctx, ps.gen, tp, r, ps.done)
}

func (p *Pipeline) fetch(ctx context.Context, gen uint64, tp ledger.TopicPartition, r source.PartitionReader, done chan struct{}) {
	defer close(done)
	defer r.Close()
	b := retry.New()
	var ck checker // the JSON check's scratch, reused for every record
	for {
		m, err := r.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, source.ErrBroker) {
				p.log.Debug("fetching", "partition", tp.String(), "err", err) // the worker logs the broker once
			} else {
				p.log.Warn("fetching", "partition", tp.String(), "err", err)
			}
			if !retry.Sleep(ctx, b.Next()) {
				return
			}
			continue
		}
		b.Reset()
		f := fetched{tp: tp, gen: gen, msg: m}
		if !m.Control {
			f.fits, f.preVer = p.predecode(&ck, m.Value)
			f.pre = p.predecodeSchema(m.Value, m.Key)
		}
		// Charged before it is queued: the queue, the buffer and the flush
		// in flight are all under the budget. Waiting here is the
		// back-pressure: the partition is not read until memory frees. A
		// JSON value that fits is kept as fetched, so it costs what a raw
		// one does (the pipeline tops the charge up if it decodes it after
		// all: handle.go).
		cost := RecordCost(p.spec.Format, m)
		if f.fits {
			cost = RecordCost("raw", m)
		}
		if err := p.n.mem.acquire(ctx, cost); err != nil {
			return
		}
		f.cost = cost
		select {
		case p.in <- f:
		case <-ctx.Done():
			p.n.mem.release(cost)
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
				p.bytes = max(p.bytes-r.Size(), 0) // near enough: only for the target size
				p.n.mem.release(r.Mem)
				p.addCharged(-r.Mem)
				return true
			}
			return false
		})
	}
	p.buf, p.dlq = keep(p.buf), keep(p.dlq)
}
