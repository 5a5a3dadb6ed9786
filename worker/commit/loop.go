package commit

import (
	"context"
	"log/slog"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/worker/internal/retry"
	"github.com/floe-io/floe/worker/phase"
)

// maxEntriesPerCommit bounds one commit so a long backlog (after an outage)
// is committed in steps of reasonable size.
const maxEntriesPerCommit = 256

// next says how a round of a table's loop goes on after one of its steps.
type next int

const (
	proceed next = iota // to the round's next step
	again               // to the next round at once
	stop                // ctx ended: the loop returns
)

// tableLoop is the state of one table's commit loop; its goroutine owns it.
type tableLoop struct {
	c     *Committer
	table string
	log   *slog.Logger
	b     *retry.Backoff
	tick  *time.Ticker
	sched schedule
	// rewriting delivers the compaction planned in the background; planned
	// is its outcome, to commit at the next round.
	rewriting chan rewriteOutcome
	planned   *rewriteOutcome
	// cleaning delivers the outcome of the orphan cleanup running in the
	// background, at most one at a time.
	cleaning chan orphanOutcome
	// fencedAt is the role a commit was refused as stale for: while the
	// state still shows it, this node's state lags behind the move, and
	// committing again would only be refused again.
	fencedAt *ledger.Assignment
	wasMine  bool
	// schema requests that failed are retried with backoff
	schemaBackoff *retry.Backoff
	schemaRetryAt time.Time
	// settling what follows a commit (Sink.Settle) is retried with backoff
	settleBackoff *retry.Backoff
	settleRetryAt time.Time
	maintain      chan maintainReq
	// gathering holds a flush for the other nodes' entries of its slot
	// (gather.go); holdUntil is when the current hold ends, zero for none.
	gathering gather
	holdUntil time.Time
}

// Run commits a table's recorded files whenever this node holds its
// committer role and the ledger has entries pending, until ctx ends. It
// wakes on every change to the table's state (not to other tables'), so a
// flush is committed as soon as it is recorded. It also runs the table's
// maintenance: expiry; orphan cleanup, in the background (it commits
// nothing, and the sink fences its deletions), reported when it ends; and
// compaction, whose rewrite runs in the background and whose commit is made
// here, in order with the appends, so that the table has a single writer.
func (c *Committer) Run(ctx context.Context, table string) {
	l := &tableLoop{
		c: c, table: table, log: c.log.With("table", ledger.DisplayName(table), "role", "committer"),
		b: retry.New(), tick: time.NewTicker(c.cfg.CommitInterval), sched: newSchedule(time.Now(), phase.Of(table)),
		schemaBackoff: retry.New(), settleBackoff: retry.New(), maintain: c.maintainChan(table),
	}
	defer l.tick.Stop()
	defer func() {
		if l.rewriting != nil {
			<-l.rewriting // ctx is done: the rewrite returns promptly
		}
		if l.cleaning != nil {
			<-l.cleaning // likewise the orphan cleanup
		}
	}()
	for l.round(ctx) != stop {
	}
}

// round reads the role and runs each job of the loop in order: maintenance
// that is due, schema requests first (files that use new columns are
// recorded only once their request is applied, so appends stay in order),
// a replace rewind's delete, then appends; it waits for a change when
// there is nothing to do.
func (l *tableLoop) round(ctx context.Context) next {
	changed := l.c.state.WatchTable(l.table)
	select {
	case out := <-l.cleaning: // nil when none runs: never ready
		l.cleanedUp(ctx, out)
	default:
	}
	a, mine := l.role()
	if mine {
		l.settle(ctx, a)
		l.maintainIfDue(ctx, a)
	}
	if l.planned != nil {
		l.sched.planned(*l.planned)
		if mine {
			_ = l.c.commitRewrite(ctx, l.table, a, *l.planned, &l.sched.budget, l.log) // shown in status
		}
		l.planned = nil
	}
	if n := l.applySchemas(ctx, a, mine); n != proceed {
		return n
	}
	if n := l.replaceDelete(ctx, a, mine, changed); n != proceed {
		return n
	}
	if n := l.commitPending(ctx, a, mine); n != proceed {
		return n
	}
	return l.wait(ctx, a, mine, changed)
}

// role returns the table's committer and whether it is this node (and not
// a role a commit was already fenced for).
func (l *tableLoop) role() (ledger.Assignment, bool) {
	a, ok := l.c.state.Committer(l.table)
	mine := ok && a.Node == l.c.cfg.NodeID && (l.fencedAt == nil || *l.fencedAt != a)
	if !mine && l.wasMine {
		// The role moved away: problems of committing and maintaining
		// are the new committer's to report now, not this node's.
		l.c.update(l.table, func(t *status.TableStatus) {
			for _, c := range []string{"commit", "compaction", "expiry", "orphan cleanup", "follow-up"} {
				t.Problem(c, "")
			}
		})
	}
	l.wasMine = mine
	return a, mine
}

// fence remembers that role a was refused as stale.
func (l *tableLoop) fence(a ledger.Assignment) { l.fencedAt = &a }

// maintainIfDue runs expiry when due, and starts an orphan cleanup and a
// compaction in the background when one is due and none is in flight.
func (l *tableLoop) maintainIfDue(ctx context.Context, a ledger.Assignment) {
	if l.sched.expireDue(l.c.cfg.ExpireInterval) {
		l.c.expire(ctx, l.table, a, l.log)
	}
	if l.sched.orphansDue(l.c.cfg.OrphanInterval) && l.cleaning == nil {
		l.cleaning = l.c.startCleanup(ctx, l.table, a)
	}
	_, m, ok := l.c.lookup(l.table)
	if !ok || l.rewriting != nil || l.planned != nil {
		return
	}
	pol, due := l.sched.compaction(m, l.c.cfg.TargetFileSize)
	if !due {
		return
	}
	l.rewriting = make(chan rewriteOutcome, 1)
	go func(out chan<- rewriteOutcome) {
		rw, err := l.c.sink.PlanRewrite(ctx, l.table, pol)
		out <- rewriteOutcome{rw: rw, err: err}
	}(l.rewriting)
}

// applySchemas applies the table's pending schema requests, unless a
// failure's backoff has not passed yet.
func (l *tableLoop) applySchemas(ctx context.Context, a ledger.Assignment, mine bool) next {
	reqs := l.c.state.SchemaRequests(l.table)
	if !mine || len(reqs) == 0 || !time.Now().After(l.schemaRetryAt) {
		return proceed
	}
	err := l.c.applySchemas(ctx, l.table, a, reqs, l.log)
	if ctx.Err() != nil {
		return stop
	}
	switch {
	case l.c.fenced(err):
		l.log.Info("committer role is stale; not applying schema requests until the state changes", "epoch", a.Epoch, "err", err)
		l.fence(a)
		return again
	case err != nil:
		// Shown to the requesting pipelines; appends of others go on.
		l.log.Warn("applying schema requests failed, retrying", "err", err)
		l.schemaRetryAt = time.Now().Add(l.schemaBackoff.Next())
	default:
		l.schemaBackoff.Reset()
	}
	return proceed
}

// replaceDelete runs a replace rewind's delete when one is owed; nothing
// else is committed until it is done.
func (l *tableLoop) replaceDelete(ctx context.Context, a ledger.Assignment, mine bool, changed <-chan struct{}) next {
	ctl := l.c.state.Control(l.table)
	if !mine || len(ctl.ReplaceFrom) == 0 {
		return proceed
	}
	err := l.c.replaceDelete(ctx, l.table, ctl, a, l.log)
	if ctx.Err() != nil {
		return stop
	}
	switch {
	case l.c.fenced(err):
		l.fence(a)
		return again
	case err != nil:
		l.log.Warn("replace rewind delete failed, retrying", "err", err)
		l.c.update(l.table, func(t *status.TableStatus) {
			t.CommitFailures++
			t.Problem("commit", "deleting rows for a replace rewind: "+err.Error())
		})
		return l.sleep(ctx)
	}
	l.b.Reset()
	l.c.update(l.table, func(t *status.TableStatus) { t.Commits++; t.Problem("commit", "") })
	// The state shows the delete done once applied here; wait for it.
	select {
	case <-ctx.Done():
		return stop
	case <-changed:
	case <-l.tick.C:
	}
	return again
}

// commitPending commits the oldest pending entries, at most
// maxEntriesPerCommit of them.
func (l *tableLoop) commitPending(ctx context.Context, a ledger.Assignment, mine bool) next {
	entries := l.c.state.Pending(l.table)
	l.holdUntil = time.Time{}
	if !mine || len(entries) == 0 {
		return proceed
	}
	if due := l.gathering.hold(entries, l.c.state.Holders(l.table), gatherWindow(l.c.cfg.CommitInterval), time.Now()); !due.IsZero() {
		l.holdUntil = due // wait() wakes at due, or at the next entry
		return proceed
	}
	if len(entries) > maxEntriesPerCommit {
		entries = entries[:maxEntriesPerCommit]
	}
	start := time.Now()
	err := l.c.sink.Commit(ctx, l.table, entries, a, time.Now())
	if ctx.Err() != nil {
		return stop
	}
	if l.c.fenced(err) {
		// Not a failure: the role moved and this node's state has not
		// caught up yet. Wait until it shows another assignment.
		l.log.Info("committer role is stale; not committing until the state changes",
			"epoch", a.Epoch, "entries", len(entries), "err", err)
		l.fence(a)
		l.b.Reset()
		l.c.update(l.table, func(t *status.TableStatus) { t.Problem("commit", "") })
		return again
	}
	if err != nil {
		l.log.Warn("commit failed, retrying", "entries", len(entries), "err", err)
		l.c.update(l.table, func(t *status.TableStatus) {
			t.CommitFailures++
			t.Problem("commit", err.Error())
		})
		return l.sleep(ctx)
	}
	l.b.Reset()
	l.sched.appended(entries)
	l.log.Debug("committed", "entries", len(entries), "took", time.Since(start))
	if l.c.cfg.OnCommit != nil {
		l.c.cfg.OnCommit(ledger.DisplayName(l.table), time.Since(start))
	}
	up, isUpsert := upsertStatus(l.c.sink, l.table)
	dlqDelta := deadLetterDelta(l.c.sink, l.table)
	l.c.update(l.table, func(t *status.TableStatus) {
		t.Commits++
		t.Problem("commit", "")
		if isUpsert {
			t.Upsert = up
		}
		if dlqDelta != nil {
			t.DeadLetterDeltaVersion = dlqDelta
		}
	})
	return again // more may be pending
}

// sleep waits out the backoff after a failure.
func (l *tableLoop) sleep(ctx context.Context) next {
	if !retry.Sleep(ctx, l.b.Next()) {
		return stop
	}
	return again
}

// wait blocks until the state changes, the interval ticks, a background
// compaction is planned or maintenance is asked for.
func (l *tableLoop) wait(ctx context.Context, a ledger.Assignment, mine bool, changed <-chan struct{}) next {
	var held <-chan time.Time // nil, never ready, unless a commit is held
	if !l.holdUntil.IsZero() {
		t := time.NewTimer(time.Until(l.holdUntil))
		defer t.Stop()
		held = t.C
	}
	select {
	case <-ctx.Done():
		return stop
	case <-held:
	case <-changed:
	case <-l.tick.C:
	case out := <-l.rewriting:
		l.rewriting, l.planned = nil, &out
	case out := <-l.cleaning:
		l.cleanedUp(ctx, out)
	case req := <-l.maintain:
		if l.cleaning != nil {
			// One cleanup at a time: the one on demand follows the
			// background one.
			l.cleanedUp(ctx, <-l.cleaning)
		}
		req.reply <- l.c.maintainNow(ctx, l.table, req, mine, a, &l.sched.budget, l.log)
	}
	return again
}

// cleanedUp reports the background orphan cleanup that ended; its failure
// is not this node's to show once the loop saw the role move.
func (l *tableLoop) cleanedUp(ctx context.Context, out orphanOutcome) {
	l.cleaning = nil
	if _, m, ok := l.c.lookup(l.table); ok {
		l.sched.cleaned(out.err, m.OrphanMinAge.D())
	}
	l.c.orphansDone(ctx, l.table, out, l.wasMine, l.log)
}
