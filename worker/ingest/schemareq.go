package ingest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/control"
)

// Schema changes go through the table's single writer. A pipeline whose
// shape gained fields (or widened types) does not evolve the table itself:
// it records a schema request in the replicated state and writes no file
// that uses the new fields until the request is gone from the state. The
// table's committer applies requests in its commit loop (worker/commit), in
// order with its appends, fenced by its epoch (a node that lost the role
// cannot change the schema behind its successor's back), then answers them.
// Creating a table (its first flush) and bringing the partition spec in
// line with the mapping at a pipeline's start stay with the pipeline: they
// do not change an existing table's columns, and the catalog's
// compare-and-swap orders them.

// prepare makes the table ready for a flush that needs it prepared.
func (p *Pipeline) prepare(ctx context.Context, job *flushJob) error {
	if !job.requested {
		if p.spec.Format == "raw" || job.shape == nil || !job.shape.HasUncommitted() {
			return p.n.Sink.Prepare(ctx, p.spec, job.shape)
		}
		cur, err := p.n.Sink.Shape(ctx, p.spec)
		if err != nil {
			return err
		}
		if cur == nil { // the first flush of a new table creates it
			return p.n.Sink.Prepare(ctx, p.spec, job.shape)
		}
		req := control.SchemaRequest{ID: job.id, Node: p.n.Config.NodeID, Shape: job.shape}
		if err := p.n.Proposer.RequestSchema(ctx, p.spec.Key, req); err != nil {
			return fmt.Errorf("requesting a schema change from the committer: %w", err)
		}
		job.requested = true
		p.log.Info("schema change requested from the committer", "request", job.id, "shape", job.shape.String())
	}
	for {
		changed := p.n.State.WatchTable(p.spec.Key) // the answer is a change to this table
		reqs := p.n.State.SchemaRequests(p.spec.Key)
		i := slices.IndexFunc(reqs, func(r control.SchemaRequest) bool { return r.ID == job.id })
		if i < 0 {
			return nil // applied by the committer
		}
		if e := reqs[i].Err; e != "" {
			return &committerSchemaError{msg: e}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-time.After(time.Second):
		}
	}
}

// committerSchemaError is the committer's failure to apply a request; the
// committer retries it, and the pipeline shows it meanwhile.
type committerSchemaError struct{ msg string }

func (e *committerSchemaError) Error() string {
	return "the committer could not apply the schema: " + e.msg
}

// isConfigIssue reports whether a committer's failure is a configuration
// issue (the mapping's partitioning).
func (e *committerSchemaError) isConfigIssue() bool {
	return strings.Contains(e.msg, sink.ErrConfig.Error())
}
