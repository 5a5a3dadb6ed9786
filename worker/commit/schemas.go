package commit

import (
	"context"
	"log/slog"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/worker/control"
)

// Schema changes go through the table's single writer: pipelines record
// schema requests (worker/ingest), and the committer applies them here, in
// its commit loop, in order with its appends, fenced by its epoch, then
// answers them.

// applySchemas applies a table's pending schema requests as its committer
// (a is the role the loop read), oldest first, and answers them. It
// returns a fenced error when the role is stale.
func (c *Committer) applySchemas(ctx context.Context, table string, a ledger.Assignment, reqs []control.SchemaRequest, log *slog.Logger) error {
	spec, _, ok := c.lookup(table)
	if !ok {
		return unknown(table)
	}
	var done []string
	var failure error
	for _, r := range reqs {
		if err := c.sink.EvolveSchema(ctx, spec, r.Shape, a, time.Now()); err != nil {
			failure = err
			if len(done) == 0 && !c.fenced(err) && ctx.Err() == nil && r.Err != err.Error() {
				_ = c.prop.SchemaApplied(ctx, table, []string{r.ID}, err.Error(), a) // shown to the requester
			}
			break
		}
		done = append(done, r.ID)
	}
	if len(done) > 0 {
		if err := c.prop.SchemaApplied(ctx, table, done, "", a); err != nil {
			return err
		}
		log.Info("applied schema requests", "requests", len(done))
	}
	return failure
}

// replaceDelete runs a replace rewind's delete on the committer; the commit
// loop commits nothing else to the table until it succeeded.
func (c *Committer) replaceDelete(ctx context.Context, table string, ctl control.TableControl, a ledger.Assignment, log *slog.Logger) error {
	start := time.Now()
	n, err := c.sink.DeleteFrom(ctx, table, ctl.ReplaceFrom, ctl.RewindGen, a, time.Now())
	if err != nil {
		return err
	}
	log.Info("replace rewind: deleted rows from the new position on", "generation", ctl.RewindGen, "rows", n, "took", time.Since(start))
	return nil
}
