package ingest

import (
	"maps"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
)

// Why a partition assigned to this node is not read here (status.Held).
const (
	HeldDraining    = "draining"     // the node drains: it never fetches again
	HeldSuspended   = "suspended"    // the table stopped at a bad record
	HeldPaused      = "paused"       // an operator paused the table
	HeldTopicPaused = "topic paused" // the topic's latest schema cannot be followed
)

// heldReason says why tp, assigned here, is not fetched: "" when nothing
// holds it (it is read, or waits only for its start offset).
func (p *Pipeline) heldReason(tp ledger.TopicPartition) string {
	switch {
	case p.n.draining.Load():
		return HeldDraining
	case p.suspended:
		return HeldSuspended
	case p.paused:
		return HeldPaused
	}
	if _, ok := p.pausedTopics[tp.Topic]; ok {
		return HeldTopicPaused
	}
	return ""
}

// noteHeld shows in the table's status every partition assigned to this
// node, at its epoch, that the node does not read and why: an operator
// asking why a partition makes no progress sees "draining" or "paused"
// beside it instead of a reader that is simply absent. It runs after each
// change of what the pipeline reads, on the pipeline goroutine.
func (p *Pipeline) noteHeld() {
	held := map[string]status.HeldPartition{}
	for tp, epoch := range p.want {
		if ps, ok := p.parts[tp]; ok && !ps.stopped && ps.epoch == epoch {
			continue
		}
		if why := p.heldReason(tp); why != "" {
			held[tp.String()] = status.HeldPartition{Topic: tp.Topic, Partition: tp.Partition, Epoch: epoch, Why: why}
		}
	}
	p.status(func(t *status.TableStatus) {
		if !maps.Equal(t.Held, held) {
			t.Held = held
		}
	})
}
