package ingest

import (
	"context"

	"github.com/floe-io/floe/worker/control"
)

// applyControl runs in the pipeline goroutine with the table's latest
// control: a rewind resets the pipeline, a pause stops its fetchers and
// drops what it buffered (it is fetched again from the ledger on resume).
func (p *Pipeline) applyControl(ctx context.Context, c control.TableControl) {
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
