package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/floe-io/floe/ledger"
)

// ErrNotPaused: a resume named a table that is neither suspended nor has a
// paused topic on this node.
var ErrNotPaused = errors.New("table is not suspended or paused on this node")

// ErrNoSuchTable: no pipeline of this node writes the named table.
var ErrNoSuchTable = errors.New("no such table on this node")

type resumeReq struct {
	skip  bool
	reply chan ResumeResult
}

// ResumeResult says what a resume did.
type ResumeResult struct {
	Table string `json:"table"`
	// Skipped is the record a suspended table was resumed past, if skip.
	Skipped *SuspendedRecord `json:"skipped,omitempty"`
	// Topics are the topics paused by an incompatible schema that resumed.
	Topics []string `json:"topics,omitempty"`
	Err    string   `json:"error,omitempty"`
}

// Resume restarts a table (namespace.name) this node suspended at a bad
// record, or whose topics it paused at an incompatible schema. With skip,
// a suspended table consumes the record it stopped at as skipped (it counts
// once it is flushed and recorded; a crash before that suspends again). A
// paused topic re-reads the table's schema (an operator may have evolved it
// by hand) and decodes the record again. The state is per node: in a
// cluster, send it to the node that holds the table's partitions.
func (w *Worker) Resume(ctx context.Context, table string, skip bool) (ResumeResult, error) {
	w.mu.Lock()
	var p *pipeline
	for key, pl := range w.pipelines {
		if ledger.DisplayName(key) == table || key == table {
			p = pl
		}
	}
	w.mu.Unlock()
	if p == nil {
		return ResumeResult{}, fmt.Errorf("%w: %s", ErrNoSuchTable, table)
	}
	req := resumeReq{skip: skip, reply: make(chan ResumeResult, 1)}
	select {
	case p.resume <- req:
	case <-ctx.Done():
		return ResumeResult{}, ctx.Err()
	}
	select {
	case res := <-req.reply:
		if res.Err != "" {
			return res, fmt.Errorf("%w: %s", ErrNotPaused, table)
		}
		return res, nil
	case <-ctx.Done():
		return ResumeResult{}, ctx.Err()
	}
}

// doResume runs in the pipeline goroutine.
func (p *pipeline) doResume(ctx context.Context, req resumeReq) ResumeResult {
	res := ResumeResult{Table: ledger.DisplayName(p.spec.Key)}
	if !p.suspended && len(p.pausedTopics) == 0 {
		res.Err = ErrNotPaused.Error()
		return res
	}
	if p.suspended {
		if req.skip && p.suspendedAt != nil {
			p.skipOnce = p.suspendedAt
			at := *p.suspendedAt
			res.Skipped = &SuspendedRecord{Topic: at.Topic, Partition: at.Partition, Offset: at.From}
		}
		p.suspended, p.suspendedAt = false, nil
		p.status(func(t *TableStatus) { t.State, t.SuspendedAt = StatePending, nil; t.recompute() })
	}
	for topic := range p.pausedTopics {
		res.Topics = append(res.Topics, topic)
		p.status(func(t *TableStatus) { t.problem(problemSchema+topic, "") })
	}
	if len(p.pausedTopics) > 0 {
		p.pausedTopics = nil
		// The table may have been evolved by hand: start from its schema.
		p.schemas = nil
		if !p.loadShape(ctx) {
			return res
		}
	}
	p.log.Info("table resumed", "skip", req.skip, "topics", res.Topics)
	p.reconcile(ctx)
	return res
}
