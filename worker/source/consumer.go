package source

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/ledger"
)

// A node reads every partition it holds through one franz-go client, not one
// client per partition: each client keeps its own copy of the metadata of
// the topics it reads, every partition of them, and at 5,000 partitions
// those copies were most of a node's heap (docs/benchmarks.md, "Memory").
//
// What franz-go (v1.22) guarantees, read in kgo/consumer.go and
// consumer_direct.go, and what the consumer relies on:
//   - RemoveConsumePartitions assigns with assignInvalidateMatching: it stops
//     the consumer session, which cancels every fetch in flight, waits for
//     them to end, and discards every buffered fetch (of all partitions; the
//     partitions kept are fetched again from their cursors, which only move
//     when a poll takes records). When it returns no record of the removed
//     partition is buffered and none can be buffered later. Errors of the
//     dying session may still surface in a later poll (its
//     fakeReadyForDraining), for a partition no longer assigned.
//   - AddConsumePartitions after a remove records the new offset and the
//     next metadata update makes a new cursor at it: a remove-then-add of
//     the same partition at another offset fetches from the new offset.
//   - A poll strips a paused partition's records from the fetch it takes
//     and leaves its cursor where it was, so they are fetched again after
//     ResumeFetchPartitions; a pause outlives a remove, so it is cleared
//     when a partition is removed.
//
// The consumer does not rely on these alone to keep a record of an earlier
// registration of a partition from a later reader: one goroutine per
// client polls, dispatches a poll's whole batch, and only then applies the
// adds and removes asked for in between; a record is dispatched to the
// registration the goroutine holds for its partition at that moment; and a
// registration accepts no offset below its next one (its start, then one
// past the last it accepted), so it never returns a record twice, out of
// order, or below the offset it was opened at (franz-go resets an offset
// out of range to the partition's start).

// ErrReaderClosed is returned by Read on a closed reader.
var ErrReaderClosed = errors.New("source: reader closed")

// nodeConsumer hands out the partition readers of one node. A partition is
// read by one client at most once, so a partition read by two readers at
// once (two tables of one topic) is read by a second client, a lane; a
// lane's client and goroutine end when its last reader closes.
type nodeConsumer struct {
	opts    []kgo.Opt // readerOpts, with the tracker's hooks
	bound   queueBound
	tracker *healthTracker // every lane's brokers (health.go)

	mu    sync.Mutex
	lanes []*lane
}

func newNodeConsumer(opts []kgo.Opt) *nodeConsumer {
	t := newHealthTracker()
	return &nodeConsumer{opts: append(slices.Clip(opts), kgo.WithHooks(t)), tracker: t}
}

// reader registers a reader of tp from offset in the first lane not reading
// tp, starting a lane if every lane reads it.
func (c *nodeConsumer) reader(tp ledger.TopicPartition, offset int64, fetchBytes int32, onError func(error)) PartitionReader {
	r := newRegistration(tp, offset, fetchBytes, onError)
	c.mu.Lock()
	var l *lane
	for _, cand := range c.lanes {
		if _, busy := cand.claimed[tp]; !busy {
			l = cand
			break
		}
	}
	if l == nil {
		var err error
		if l, err = startLane(c.opts, &c.bound, fetchBytes); err != nil {
			c.mu.Unlock()
			return failedReader{fmt.Errorf("reading %s: %w", tp, err)}
		}
		c.lanes = append(c.lanes, l)
	}
	l.claimed[tp] = struct{}{}
	r.lane = l
	c.mu.Unlock()
	l.request(laneRequest{kind: reqAdd, reg: r})
	return &sharedReader{c: c, reg: r}
}

// release forgets r's claim on its lane after its removal was applied, and
// stops the lane when nothing else reads through it.
func (c *nodeConsumer) release(r *registration) {
	l := r.lane
	c.mu.Lock()
	delete(l.claimed, r.tp)
	idle := len(l.claimed) == 0
	if idle {
		for i, cand := range c.lanes {
			if cand == l {
				c.lanes = append(c.lanes[:i], c.lanes[i+1:]...)
				break
			}
		}
	}
	c.mu.Unlock()
	if idle {
		l.stop()
	}
}

// sharedReader is one partition's reader on a lane.
type sharedReader struct {
	c    *nodeConsumer
	reg  *registration
	once sync.Once
}

// Read returns the partition's next record or marker. Its high watermark is
// the last stable offset: a read-committed reader sees nothing past it, so
// lag is measured against it.
func (s *sharedReader) Read(ctx context.Context) (Message, error) {
	it, err := s.reg.take(ctx)
	if err != nil {
		return Message{}, err
	}
	if it.err != nil {
		if s.reg.onError != nil {
			s.reg.onError(it.err)
		}
		return Message{}, it.err
	}
	return it.msg, nil
}

// Close removes the partition from its lane's client and waits until the
// lane's goroutine has applied the removal, so a reader of the same
// partition opened after Close returns is a registration of its own.
func (s *sharedReader) Close() error {
	s.once.Do(func() {
		s.reg.close()
		done := make(chan struct{})
		s.reg.lane.request(laneRequest{kind: reqRemove, reg: s.reg, done: done})
		<-done
		s.c.release(s.reg)
	})
	return nil
}

// failedReader is a reader whose client could not be built.
type failedReader struct{ err error }

func (f failedReader) Read(context.Context) (Message, error) { return Message{}, f.err }
func (f failedReader) Close() error                          { return nil }
