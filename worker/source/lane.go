package source

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/ledger"
)

// Fetch size bounds of a lane's client. Its fetch size is the sum of its
// readers' (each the budget's fetch share of a partition, so the sum is
// about the budget's fetch share), at most maxLaneFetch and 1/32 of the
// node's queue bound (fetchBoundDiv); a partition's share of a fetch is
// the largest reader's.
//
// Why so small a part: fetch sizes count compressed bytes, and a fetch is
// decompressed (the benchmark's snappy JSON batches grow about seven
// times), copied into the queues whole before the bound is checked again,
// while the client already fetches the next one. With fetches as large as
// the bound (64 MiB) the fetch path held 1.5 GB for a 256 MiB bound on a
// real broker, and with an eighth of it still 850 MB for 128 MiB; at 1/32
// (4 MiB at the default budget) the drain's CPU per record fell from 32-40
// to 14 s per million (docs/benchmarks.md's git history, "The budget's split"). A 4 MiB
// fetch still carries thousands of records.
const (
	maxLaneFetch  = 64 << 20
	fetchBoundDiv = 32
)

type reqKind int

const (
	reqAdd reqKind = iota
	reqRemove
	reqResume
)

// laneRequest is a change the lane's goroutine applies between polls.
type laneRequest struct {
	kind reqKind
	reg  *registration
	done chan struct{} // closed once applied (removes)
}

// lane is one franz-go client and the goroutine that polls it and
// dispatches each partition's records to its registration.
type lane struct {
	cl    *kgo.Client
	bound *queueBound // the node's, shared by its lanes
	// waitingRoom: the goroutine waits for the node's queues to make room
	// (for tests).
	waitingRoom atomic.Bool
	claimed     map[ledger.TopicPartition]struct{} // under nodeConsumer.mu

	mu     sync.Mutex
	reqs   []laneRequest
	cancel context.CancelFunc // the poll in progress
	regs   map[ledger.TopicPartition]*registration
	wake   chan struct{} // cap 1
	quit   chan struct{}
	done   chan struct{}
}

func startLane(opts []kgo.Opt, bound *queueBound, fetchBytes int32) (*lane, error) {
	l := &lane{
		bound:   bound,
		claimed: map[ledger.TopicPartition]struct{}{},
		regs:    map[ledger.TopicPartition]*registration{},
		wake:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	opts = append(append([]kgo.Opt(nil), opts...),
		kgo.FetchMaxBytes(max(fetchBytes, 1)),
		kgo.FetchMaxPartitionBytes(max(fetchBytes, 1)),
		kgo.WithLogger(laneLogger{l}))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	l.cl = cl
	go l.run()
	return l, nil
}

// request queues a change and interrupts the poll in progress, so it is
// applied as soon as the current batch is dispatched.
func (l *lane) request(r laneRequest) {
	l.mu.Lock()
	l.reqs = append(l.reqs, r)
	if l.cancel != nil {
		l.cancel()
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// stop ends the goroutine and closes the client; the lane has no readers.
func (l *lane) stop() {
	close(l.quit)
	l.mu.Lock()
	if l.cancel != nil {
		l.cancel()
	}
	l.mu.Unlock()
	<-l.done
}

// run polls until stopped. Each round applies the requests queued since
// the last, then polls; a request arriving during a poll cancels it (the
// poll's buffered fetches stay in the client), so adds and removes wait at
// most for the dispatch of the batch in hand.
func (l *lane) run() {
	defer close(l.done)
	defer l.cl.Close()
	for {
		l.apply()
		select {
		case <-l.quit:
			return
		default:
		}
		ctx, cancel := context.WithCancel(context.Background())
		l.mu.Lock()
		idle := len(l.regs) == 0 && len(l.reqs) == 0
		if len(l.reqs) > 0 {
			cancel()
		}
		l.cancel = cancel
		l.mu.Unlock()
		if room := l.bound.full(); idle || room != nil {
			// Idle, or the node's queues are full: wait for a request or
			// for room, then apply the requests and check again.
			l.waitingRoom.Store(room != nil)
			select {
			case <-l.quit:
			case <-l.wake:
			case <-room:
			}
			l.waitingRoom.Store(false)
		} else {
			l.dispatch(l.cl.PollFetches(ctx))
		}
		l.mu.Lock()
		l.cancel = nil
		l.mu.Unlock()
		cancel()
	}
}

// apply applies the queued requests in order, in one call each for the
// round's removes, adds and resumes: removing partitions one by one would
// stop and restart the client's fetch session once per partition when a
// pipeline stops all of its readers. A partition removed and added in one
// round is removed first.
func (l *lane) apply() {
	l.mu.Lock()
	reqs := l.reqs
	l.reqs = nil
	l.mu.Unlock()
	if len(reqs) == 0 {
		return
	}
	adds := map[string]map[int32]kgo.Offset{}
	removes, resumes := map[string][]int32{}, map[string][]int32{}
	var done []chan struct{}
	for _, rq := range reqs {
		tp := rq.reg.tp
		switch rq.kind {
		case reqAdd:
			if adds[tp.Topic] == nil {
				adds[tp.Topic] = map[int32]kgo.Offset{}
			}
			adds[tp.Topic][tp.Partition] = kgo.NewOffset().At(rq.reg.start)
			l.setReg(tp, rq.reg)
		case reqRemove:
			if l.regs[tp] == rq.reg {
				delete(adds[tp.Topic], tp.Partition) // added and removed in one round
				removes[tp.Topic] = append(removes[tp.Topic], tp.Partition)
				l.setReg(tp, nil)
			}
			done = append(done, rq.done)
		case reqResume:
			if l.regs[tp] == rq.reg {
				resumes[tp.Topic] = append(resumes[tp.Topic], tp.Partition)
			}
		}
	}
	if len(removes) > 0 {
		l.cl.RemoveConsumePartitions(removes)
		// A pause outlives a remove: a later reader of the partition
		// would start paused.
		l.cl.ResumeFetchPartitions(removes)
	}
	if len(adds) > 0 {
		l.cl.AddConsumePartitions(adds)
	}
	if len(resumes) > 0 {
		l.cl.ResumeFetchPartitions(resumes)
	}
	for _, d := range done {
		close(d)
	}
	l.resize()
}

// setReg sets (nil: deletes) a partition's registration, under mu for the
// logger.
func (l *lane) setReg(tp ledger.TopicPartition, r *registration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r == nil {
		delete(l.regs, tp)
		return
	}
	l.regs[tp] = r
}

// resize sets the client's fetch sizes from its registrations.
func (l *lane) resize() {
	var sum, most int64
	for _, r := range l.regs {
		sum += int64(r.fetchBytes)
		most = max(most, int64(r.fetchBytes))
	}
	if most == 0 {
		return
	}
	// One fetch is queued whole before any partition of it is paused, and
	// it grows when decompressed: it must fit the node's queue bound many
	// times over (fetchBoundDiv).
	limit := int64(maxLaneFetch)
	if c := l.bound.fetchCap(); c > 0 {
		limit = min(limit, max(c/fetchBoundDiv, 1))
	}
	l.cl.UpdateFetchMaxBytes(int32(min(max(sum, most), limit)), int32(min(most, limit)))
}

// dispatch hands each partition's records of a poll to its registration,
// then pauses the partitions whose queues are full. A partition without a
// registration was removed: its leftovers (errors of a dying session) are
// dropped.
func (l *lane) dispatch(fs kgo.Fetches) {
	pause := map[string][]int32{}
	var broad []kgo.FetchTopicPartition
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		r := l.regs[ledger.TopicPartition{Topic: p.Topic, Partition: p.Partition}]
		if r == nil {
			if p.Err != nil && p.Partition < 0 && !errors.Is(p.Err, context.Canceled) && !errors.Is(p.Err, kgo.ErrClientClosed) {
				broad = append(broad, p)
			}
			return
		}
		end := p.HighWatermark
		if p.LastStableOffset > 0 {
			end = p.LastStableOffset
		}
		its := make([]item, 0, len(p.Records))
		for _, rec := range p.Records {
			if rec.Offset < r.next {
				continue // never below the start, never twice
			}
			r.next = rec.Offset + 1
			its = append(its, item{msg: message(rec, end), size: recordBytes(rec)})
		}
		if len(its) == 0 && p.Err != nil {
			its = append(its, item{err: fmt.Errorf("fetching %s: %w", r.tp, asBrokerErr(p.Err))})
		}
		if len(its) > 0 && r.push(its) {
			pause[p.Topic] = append(pause[p.Topic], p.Partition)
		}
	})
	if len(pause) > 0 {
		l.cl.PauseFetchPartitions(pause)
	}
	for _, p := range broad {
		l.report(p.Topic, fmt.Errorf("fetching %s: %w", p.Topic, p.Err))
	}
}

// report passes an error that names no partition to the readers it
// concerns: a topic's, or every reader when it names no topic either (a
// broker that cannot be reached concerns them all).
func (l *lane) report(topic string, err error) {
	if topic == "" && !errors.Is(err, ErrBroker) {
		err = fmt.Errorf("%w: %w", ErrBroker, err)
	}
	l.mu.Lock()
	var fns []func(error)
	for tp, r := range l.regs {
		if r.onError != nil && (topic == "" || tp.Topic == topic) {
			fns = append(fns, r.onError)
		}
	}
	l.mu.Unlock()
	for _, fn := range fns {
		fn(err)
	}
}
