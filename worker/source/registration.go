package source

import (
	"context"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
)

// registration is one reader's hold on a partition of a lane: the records
// dispatched to it and not yet read, bounded by fetchBytes. The lane's
// goroutine pushes, the reader takes; a full queue pauses the partition
// (its records stay queued) until the reader empties it.
type registration struct {
	tp         ledger.TopicPartition
	start      int64
	fetchBytes int32
	onError    func(error)
	lane       *lane // set once, before the add is requested

	// next is the lowest offset the registration accepts: its start, then
	// one past the last record it accepted. Only the lane's goroutine
	// touches it.
	next int64

	mu      sync.Mutex
	items   []item
	head    int   // items[:head] are read
	queued  int64 // bytes of items[head:]
	pausing bool  // the lane paused (or is about to pause) the partition
	closed  bool
	wake    chan struct{} // cap 1: items arrived or the registration closed
}

// compactAt is how many read items a queue keeps before moving its unread
// ones to the front.
const compactAt = 1024

// item is a dispatched record, already a Message of its own (see message),
// or a fetch error; size is what the record counts as queued.
type item struct {
	msg  Message
	size int64
	err  error
}

func newRegistration(tp ledger.TopicPartition, offset int64, fetchBytes int32, onError func(error)) *registration {
	return &registration{tp: tp, start: offset, next: offset, fetchBytes: max(fetchBytes, 1), onError: onError, wake: make(chan struct{}, 1)}
}

// recordBytes is what a queued record holds: its bytes and its Message.
func recordBytes(r *kgo.Record) int64 {
	n := int64(queuedRecordOverhead + len(r.Key) + len(r.Value))
	for _, h := range r.Headers {
		n += int64(len(h.Key) + len(h.Value))
	}
	return n
}

// push queues records and errors, and reports whether the queue is now
// full and the partition not paused yet: the caller pauses it.
func (r *registration) push(its []item) (pause bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	var n int64
	for _, it := range its {
		n += it.size
	}
	r.queued += n
	r.lane.bound.add(n)
	r.items = append(r.items, its...)
	select {
	case r.wake <- struct{}{}:
	default:
	}
	if !r.pausing && r.queued >= int64(r.fetchBytes) {
		r.pausing = true
		return true
	}
	return false
}

// take waits for the next item. When it empties a queue whose partition
// the lane paused, it asks the lane to resume the partition.
func (r *registration) take(ctx context.Context) (item, error) {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return item{}, ErrReaderClosed
		}
		if r.head < len(r.items) {
			it := r.items[r.head]
			r.items[r.head] = item{}
			r.head++
			r.queued -= it.size
			r.lane.bound.add(-it.size)
			resume := false
			switch {
			case r.head == len(r.items):
				r.items, r.head = r.items[:0], 0
				resume, r.pausing = r.pausing, false
			case r.head >= compactAt && 2*r.head >= len(r.items):
				// A queue that never empties would otherwise grow by
				// its read prefix forever.
				n := copy(r.items, r.items[r.head:])
				clear(r.items[n:])
				r.items, r.head = r.items[:n], 0
			}
			r.mu.Unlock()
			if resume {
				r.lane.request(laneRequest{kind: reqResume, reg: r})
			}
			return it, nil
		}
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return item{}, ctx.Err()
		case <-r.wake:
		}
	}
}

// close drops the queue; the lane dispatches nothing more to it.
func (r *registration) close() {
	r.mu.Lock()
	if r.lane != nil {
		r.lane.bound.add(-r.queued)
	}
	r.closed, r.items, r.head, r.queued = true, nil, 0, 0
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// message turns a fetched record or marker into a Message, when it is
// queued. Its bytes are copied out of the fetch: franz-go slices every
// record of a batch from one decompressed buffer and allocates the batch's
// records in one slice, so a record that kept them would keep its whole
// batch alive while it waits, counted as itself only, in a partition's
// queue (one record left of each of 5,000 partitions' batches) or in a
// pipeline's queue or buffer, where the budget charges it as itself too.
func message(m *kgo.Record, end int64) Message {
	if m.Attrs.IsControl() {
		return Message{Offset: m.Offset, Control: true, HighWatermark: end}
	}
	n := len(m.Key) + len(m.Value)
	for _, h := range m.Headers {
		n += len(h.Value)
	}
	buf := make([]byte, 0, n)
	cut := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		buf = append(buf, b...)
		return buf[len(buf)-len(b) : len(buf) : len(buf)]
	}
	hs := make([]records.Header, len(m.Headers))
	for i, h := range m.Headers {
		hs[i] = records.Header{Key: strings.Clone(h.Key), Value: cut(h.Value)}
	}
	return Message{Offset: m.Offset, Key: cut(m.Key), Value: cut(m.Value), Headers: hs, Time: m.Timestamp, HighWatermark: end}
}
