package source

import "sync/atomic"

// queuedRecordOverhead is what a queued record costs besides its key, value
// and header bytes: the kgo.Record franz-go allocates for it (about 160
// bytes) and the queue's item (32 bytes).
const queuedRecordOverhead = 192

// queueBound bounds the bytes queued across every registration of a node,
// all lanes together. Each registration's own share (its fetchBytes) has a
// floor, so with thousands of partitions the shares add up to far more than
// the fetch quarter of the memory budget they are cut from (5,000 × 16 KiB
// is 80 MiB for a 16 MiB quarter), and fetched records are held outside the
// budget until a fetcher takes them. Past the limit each partition that
// receives records is paused, as if its own queue were full; it is resumed
// when its reader empties its queue, so every paused partition has records
// its reader will take and none waits on another's.
type queueBound struct {
	queued atomic.Int64
	limit  atomic.Int64 // 0: no node-wide limit
}

// add counts n more queued bytes (n < 0: taken) and reports whether the
// node's queues are now over the limit.
func (b *queueBound) add(n int64) (over bool) {
	if b == nil {
		return false
	}
	q := b.queued.Add(n)
	l := b.limit.Load()
	return l > 0 && q >= l
}

// fetchCap is the largest fetch a lane may ask for: the limit, if set.
func (b *queueBound) fetchCap() int64 {
	if b == nil {
		return 0
	}
	return b.limit.Load()
}
