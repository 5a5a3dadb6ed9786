package ingest

import (
	"context"
	"sync"
)

// budget is the node's memory budget: the bytes of every record the node
// holds, from the moment a fetcher takes it from its reader until the
// flush that wrote it is recorded in the ledger (or the record is
// dropped). What it covers: the queue between the fetchers and a
// pipeline, the pipeline's buffer, and the flush in flight (Parquet
// encoding, upload, RecordFiles). Fetchers acquire; the pipeline
// goroutine releases. A fetcher that would take the node past the limit
// waits (back-pressure: the partition is not read meanwhile, nothing is
// dropped) and asks for flushes, largest buffer first.
//
// One acquire always succeeds while nothing is held, so a single record
// larger than the limit still passes: held never exceeds limit plus one
// record, plus what take adds past it (a record checked as fitting its
// columns but decoded after all, handle.go).
type budget struct {
	limit int64
	// press asks for need more bytes to be freed; called without mu, each
	// time a waiter wakes and still finds no room.
	press func(need int64)

	mu    sync.Mutex
	held  int64
	freed chan struct{} // closed and replaced at a release that has waiters
	// waiting: someone waits on freed. Releases without waiters (most:
	// every record handle does not buffer) leave the channel alone.
	waiting bool
	// pressedFor is the freed channel of the last press: one waiter
	// presses per release, not every waiter (2,000 fetchers waking at a
	// release each sorting 1,000 pipelines was 8% of a node's CPU at 1,000
	// tables). The flushes asked for are under way; if they free too
	// little, the next release's first waiter presses again.
	pressedFor chan struct{}
}

func newBudget(limit int64, press func(need int64)) *budget {
	if press == nil {
		press = func(int64) {}
	}
	return &budget{limit: limit, press: press, freed: make(chan struct{})}
}

// acquire takes n bytes, waiting while they do not fit. It fails only when
// ctx ends, having taken nothing.
func (b *budget) acquire(ctx context.Context, n int64) error {
	for {
		b.mu.Lock()
		if b.held == 0 || b.held+n <= b.limit {
			b.held += n
			b.mu.Unlock()
			return nil
		}
		freed, need := b.freed, b.held+n-b.limit
		b.waiting = true
		press := b.pressedFor != freed
		b.pressedFor = freed
		b.mu.Unlock()
		if press {
			b.press(need)
		}
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// take adds n bytes without waiting, for a charge that grows on the
// goroutine that frees the budget (waiting there could wait for good). It
// may take held past the limit by that much; fetchers wait until it
// falls back.
func (b *budget) take(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.held += n
	b.mu.Unlock()
}

// release gives back n bytes taken by acquire and wakes the waiters.
func (b *budget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.held -= n
	if b.held < 0 {
		// Releasing more than was taken is a bug in the caller; clamping
		// keeps the node fetching instead of blocking for good.
		b.held = 0
	}
	if b.waiting {
		close(b.freed)
		b.freed, b.waiting = make(chan struct{}), false
	}
	b.mu.Unlock()
}

// Held returns the bytes held now.
func (b *budget) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}
