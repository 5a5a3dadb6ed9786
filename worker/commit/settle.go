package commit

import (
	"context"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
)

// settle has the sink bring what follows the table's commits level with
// them (Sink.Settle), so that nothing lags a quiet table until its next
// commit: a new committer (after a restart or a failover) settles in its
// first round, and a follow-up that failed is retried with backoff. A
// failure is shown as the table's "follow-up" problem and never blocks
// commits.
func (l *tableLoop) settle(ctx context.Context, a ledger.Assignment) {
	if time.Now().Before(l.settleRetryAt) {
		return
	}
	err := l.c.sink.Settle(ctx, l.table, a, time.Now())
	if ctx.Err() != nil {
		return
	}
	if err == nil && l.settleRetryAt.IsZero() {
		return // level, and nothing to clear: no status write per round
	}
	msg := ""
	if err != nil {
		l.log.Warn("bringing the table's followers level with its commits failed; retrying", "err", err)
		msg = err.Error()
		l.settleRetryAt = time.Now().Add(l.settleBackoff.Next())
	} else {
		l.settleBackoff.Reset()
		l.settleRetryAt = time.Time{}
	}
	l.c.update(l.table, func(t *status.TableStatus) { t.Problem("follow-up", msg) })
}
