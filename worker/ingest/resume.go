package ingest

import (
	"context"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
)

// resumeState is a table's replicated resume state as the pipeline sees it.
type resumeState struct {
	gen   uint64
	skips map[ledger.TopicPartition]int64
}

// SetResume hands the pipeline the table's latest resume generation and
// skips without blocking: an older undelivered one is replaced.
func (p *Pipeline) SetResume(gen uint64, skips map[ledger.TopicPartition]int64) {
	rs := resumeState{gen: gen, skips: skips}
	for {
		select {
		case p.resumed <- rs:
			return
		default:
		}
		select {
		case <-p.resumed:
		default:
		}
	}
}

// applyResume runs in the pipeline goroutine: the skips always follow the
// state; a grown generation resumes the table if it is suspended or paused.
func (p *Pipeline) applyResume(ctx context.Context, rs resumeState) {
	p.skips = rs.skips
	if rs.gen <= p.resumeGen {
		return
	}
	p.resumeGen = rs.gen
	if !p.suspended && len(p.pausedTopics) == 0 {
		return
	}
	var topics []string
	if p.suspended {
		p.suspended, p.suspendedAt = false, nil
		p.status(func(t *status.TableStatus) { t.State, t.SuspendedAt = status.StatePending, nil; t.Recompute() })
	}
	for topic := range p.pausedTopics {
		topics = append(topics, topic)
		p.status(func(t *status.TableStatus) { t.Problem(problemSchema+topic, "") })
	}
	p.log.Info("table resumed", "generation", rs.gen, "skips", len(rs.skips), "topics", topics)
	if len(p.pausedTopics) > 0 {
		p.pausedTopics = nil
		// The table may have been evolved by hand: start from its schema.
		p.schemas = nil
		if !p.loadShape(ctx) {
			return
		}
	}
	p.reconcile(ctx)
}

// operatorSkip reports whether the record at offset of tp is one an
// operator resumed the table past.
func (p *Pipeline) operatorSkip(tp ledger.TopicPartition, offset int64) bool {
	off, ok := p.skips[tp]
	return ok && off == offset
}
