package ingest

import (
	"context"
	"time"

	"github.com/floe-io/floe/internal/status"
)

// burstMax bounds the records handleBurst takes before Run's select runs
// again.
const burstMax = 256

// handleBurst handles f and then what the fetchers have already queued, up
// to burstMax records in all, and publishes what it consumed to status
// once.
//
// Why: Run's select has eleven cases, and going through it for every
// record, with a status update under the table's lock for every record,
// took 9% of a 1,000-partition drain's CPU (a profile of
// `floe bench --brokers ... --kafka-partitions 1000`: selectgo 6.4%,
// status 3.1%). The other cases wait for at most burstMax records, well
// under a millisecond: a tick, a finished flush or a new assignment is
// handled that much later, a fetcher of an old generation is filtered by
// handle as before, and a queued record is already charged to the budget,
// so handling it takes no more memory.
func (p *Pipeline) handleBurst(ctx context.Context, f fetched) {
	p.handle(ctx, f)
burst:
	for range burstMax - 1 {
		if p.held != nil || ctx.Err() != nil {
			break // a held record stops intake until it decodes
		}
		select {
		case f := <-p.in:
			p.handle(ctx, f)
		default:
			break burst
		}
	}
	p.publishConsumed()
}

// consumedCounts is what handle consumed since the last publishConsumed.
type consumedCounts struct {
	records, bytes int64
	dirty          []*partState // partitions whose fetched offset moved
}

// noteConsumed counts one consumed record of ps for status.
func (p *Pipeline) noteConsumed(ps *partState, bytes int64) {
	p.unpublished.records++
	p.unpublished.bytes += bytes
	if !ps.statusDirty {
		ps.statusDirty = true
		p.unpublished.dirty = append(p.unpublished.dirty, ps)
	}
}

// publishConsumed moves the pending counts into the table's status under
// one lock. Every caller of handle publishes before it returns to Run's
// select, so status is never behind while the pipeline waits.
func (p *Pipeline) publishConsumed() {
	c := &p.unpublished
	if c.records == 0 && len(c.dirty) == 0 {
		return
	}
	p.status(func(t *status.TableStatus) {
		t.Consumed += c.records
		t.BytesConsumed += c.bytes
		for _, ps := range c.dirty {
			ps.statusDirty = false
			if p.parts[ps.tp] != ps {
				continue // stopped since: its status entry is not this fetcher's
			}
			s, ok := t.Partitions[ps.tp.String()]
			if !ok {
				continue
			}
			s.Fetched = ps.next
			s.HighWatermark = max(s.HighWatermark, ps.hw)
			if s.LastError != "" {
				s.LastError, s.ErrorSince = "", time.Time{}
				t.Problem("kafka "+ps.tp.String(), "")
			}
		}
	})
	c.records, c.bytes = 0, 0
	clear(c.dirty)
	c.dirty = c.dirty[:0]
}
