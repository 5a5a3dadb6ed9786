package source

import "sync"

// queuedRecordOverhead is what a queued record costs besides its key, value
// and header bytes: its Message and queue item (about 150 bytes) and its
// header slice.
const queuedRecordOverhead = 192

// queueBound bounds the bytes queued across every registration of a node,
// all lanes together. Each registration's own share (its fetchBytes) has a
// floor, so with thousands of partitions the shares add up to far more than
// the fetch quarter of the memory budget they are cut from (5,000 × 16 KiB
// is 80 MiB for a 16 MiB quarter), and fetched records are held outside the
// budget until a fetcher takes them. While the queues hold the limit, the
// lanes do not poll (pausing only the partitions that received records
// would let every other partition be fetched and queued in turn); their
// clients keep at most one fetch each, and readers taking records make
// room.
type queueBound struct {
	mu     sync.Mutex
	queued int64
	limit  int64         // 0: no node-wide limit
	room   chan struct{} // closed when queued falls below limit; nil if no one waits
}

// add counts n more queued bytes (n < 0: taken), waking the lanes waiting
// for room when the queues fall below the limit.
func (b *queueBound) add(n int64) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	b.queued += n
	if b.room != nil && b.queued < b.limit {
		close(b.room)
		b.room = nil
	}
	b.mu.Unlock()
}

// full returns a channel closed once there is room again, or nil when there
// is room now.
func (b *queueBound) full() <-chan struct{} {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limit == 0 || b.queued < b.limit {
		return nil
	}
	if b.room == nil {
		b.room = make(chan struct{})
	}
	return b.room
}

// setLimit sets the limit (0: none) and wakes the waiting lanes, which
// check again.
func (b *queueBound) setLimit(n int64) {
	b.mu.Lock()
	b.limit = max(n, 0)
	if b.room != nil {
		close(b.room)
		b.room = nil
	}
	b.mu.Unlock()
}

// fetchCap is the queue limit a lane's fetch size is cut from (0: none).
func (b *queueBound) fetchCap() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// Queued returns the bytes queued now.
func (b *queueBound) Queued() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.queued
}
