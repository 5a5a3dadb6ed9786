package worker

import (
	"context"
	"time"

	"github.com/floe-io/floe/ledger"
)

// maxEntriesPerCommit bounds one commit so a long backlog (after an outage)
// is committed in steps of reasonable size.
const maxEntriesPerCommit = 256

// commitLoop commits a table's recorded files whenever this node holds its
// committer role and the ledger has entries pending. It wakes on every state
// change, so a flush is committed as soon as it is recorded.
func (w *Worker) commitLoop(ctx context.Context, table string) {
	log := w.log.With("table", ledger.DisplayName(table), "role", "committer")
	b := newBackoff()
	tick := time.NewTicker(w.cfg.CommitInterval)
	defer tick.Stop()
	for {
		changed := w.state.Watch()
		a, ok := w.state.Committer(table)
		entries := w.state.Pending(table)
		if ok && a.Node == w.cfg.NodeID && len(entries) > 0 {
			if len(entries) > maxEntriesPerCommit {
				entries = entries[:maxEntriesPerCommit]
			}
			start := time.Now()
			err := w.sink.Commit(ctx, table, entries, a, time.Now())
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				log.Warn("commit failed, retrying", "entries", len(entries), "err", err)
				w.status.update(table, ledger.DisplayName(table), func(t *TableStatus) {
					t.CommitFailures++
					t.problem("commit", err.Error())
				})
				if !sleep(ctx, b.next()) {
					return
				}
				continue
			}
			b.reset()
			log.Debug("committed", "entries", len(entries), "took", time.Since(start))
			w.status.update(table, ledger.DisplayName(table), func(t *TableStatus) {
				t.Commits++
				t.problem("commit", "")
			})
			continue // more may be pending
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-tick.C:
		}
	}
}
