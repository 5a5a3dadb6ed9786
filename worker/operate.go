package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/floe-io/floe/ledger"
	"github.com/floe-io/floe/worker/control"
)

// applyControl runs in the pipeline goroutine with the table's latest
// control: a rewind resets the pipeline, a pause stops its fetchers and
// drops what it buffered (it is fetched again from the ledger on resume).
func (p *pipeline) applyControl(ctx context.Context, c control.TableControl) {
	if c.RewindGen > p.rewindGen {
		p.rewindGen = c.RewindGen
		p.log.Info("table rewound: restarting every partition from the ledger", "generation", c.RewindGen)
		p.resetAll(ctx)
	}
	if c.Paused == p.paused {
		return
	}
	p.paused = c.Paused
	if p.paused {
		p.log.Info("table paused by an operator")
		p.resetAll(ctx) // reconcile starts nothing while paused
		return
	}
	p.log.Info("table unpaused")
	p.reconcile(ctx)
}

// replaceDelete runs a replace rewind's delete on the committer; the commit
// loop commits nothing else to the table until it succeeded.
func (w *Worker) replaceDelete(ctx context.Context, table string, c control.TableControl, a ledger.Assignment, log *slog.Logger) error {
	start := time.Now()
	n, err := w.sink.DeleteFrom(ctx, table, c.ReplaceFrom, c.RewindGen, a, time.Now())
	if err != nil {
		return err
	}
	log.Info("replace rewind: deleted rows from the new position on", "generation", c.RewindGen, "rows", n, "took", time.Since(start))
	return nil
}
