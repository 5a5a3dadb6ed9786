package ingest

import (
	"context"
	"time"
)

// drain runs on the pipeline goroutine when the worker drains: stop the
// fetchers, decode what they already handed over, flush it all and wait
// until the ledger has recorded (or refused) it.
func (p *Pipeline) drain(ctx context.Context) {
	// Stop fetchers but keep their partitions: their offsets are the
	// ranges of the final flush.
	for _, ps := range p.parts {
		p.stopPartition(ps)
	}
	// Fetched records still queued are decoded too, so the next holder
	// does not fetch them again. No fetcher sends any more, so this ends.
	for queued := true; queued; {
		select {
		case f := <-p.in:
			p.handle(ctx, f)
		default:
			queued = false
		}
	}
	p.publishConsumed()
	p.noteHeld()
	// flush waits for a flush already in flight first; with wait set it
	// also waits for its own. A refused flush resets the pipeline, which
	// starts no fetcher while draining, and a flush of nothing is a no-op.
	p.flush(ctx, true)
	if p.inflight != nil {
		p.await(ctx)
	}
	if ctx.Err() != nil {
		return // the flush was aborted, not recorded: Drain must not succeed
	}
	p.log.Info("drained: fetchers stopped, buffer flushed")
	p.markDrained()
}

// markDrained tells Drain this pipeline has nothing left to flush.
func (p *Pipeline) markDrained() {
	if !p.drainClosed {
		p.drainClosed = true
		close(p.drained)
	}
}

// sleepUndrained is sleep for a pipeline that has not started fetching yet
// (its table's schema cannot be loaded): such a pipeline has nothing to
// flush, so a drain that begins meanwhile must not wait for it.
func (p *Pipeline) sleepUndrained(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	drain := p.n.drainCh
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case <-drain:
			drain = nil
			p.markDrained()
		}
	}
}
