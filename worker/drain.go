package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/floe-io/floe/internal/ledger"
)

// ErrStopped: the worker's Run returned before Drain finished.
var ErrStopped = errors.New("worker stopped")

// Drain hands this node's work over cleanly before shutdown. It stops every
// fetcher for good (a drained worker never fetches again, even while the
// state still assigns it partitions), flushes and records everything
// buffered, then waits until the tables this node commits have committed
// every entry that was pending once the flushes were recorded. Commit loops
// keep running during and after Drain, until Run's context ends, so a role
// still held is served until the leader moves it.
//
// Whatever Drain does not finish is not lost: unrecorded records are
// fetched again from the ledger's end by the partition's next holder, and
// pending entries are committed by the table's next committer. Drain only
// makes the handover quicker. It returns ctx's error if ctx ends first and
// is safe to call more than once.
func (w *Worker) Drain(ctx context.Context) error {
	w.ingest.Drain()
	w.mu.Lock()
	var pending []*running
	restarts := map[*running]chan struct{}{}
	for _, p := range w.pipelines {
		pending = append(pending, p)
		if p.restarting {
			restarts[p] = p.done
		}
	}
	w.mu.Unlock()
	for _, p := range pending {
		select {
		case <-p.Drained():
		case <-restarts[p]: // stopped for a restart: it records nothing more
		case <-ctx.Done():
			return fmt.Errorf("draining: flushing table %s: %w", ledger.DisplayName(p.Spec().Key), ctx.Err())
		case <-w.runDone:
			return fmt.Errorf("draining: flushing table %s: %w", ledger.DisplayName(p.Spec().Key), ErrStopped)
		}
	}
	if err := w.awaitCommitted(ctx); err != nil {
		return err
	}
	w.log.Info("drained")
	return nil
}

// awaitCommitted waits until no table this node commits still has an entry
// that is pending now. Entries recorded later are not waited for (nobody
// on this node records any more, but other nodes may), and a table whose
// role moves away stops counting: its new committer takes them over.
func (w *Worker) awaitCommitted(ctx context.Context) error {
	w.mu.Lock()
	var tables []string
	for t := range w.commits {
		tables = append(tables, t)
	}
	w.mu.Unlock()
	waitFor := map[string]map[string]bool{} // table -> pending entry ids
	for _, t := range tables {
		if a, ok := w.state.Committer(t); !ok || a.Node != w.cfg.NodeID {
			continue
		}
		ids := map[string]bool{}
		for _, e := range w.state.Pending(t) {
			ids[e.ID] = true
		}
		if len(ids) > 0 {
			waitFor[t] = ids
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		changed := w.state.Watch()
		for t, ids := range waitFor {
			if a, ok := w.state.Committer(t); !ok || a.Node != w.cfg.NodeID {
				w.log.Info("draining: committer role moved; leaving pending entries to the new committer", "table", ledger.DisplayName(t))
				delete(waitFor, t)
				continue
			}
			if !slices.ContainsFunc(w.state.Pending(t), func(e ledger.Entry) bool { return ids[e.ID] }) {
				delete(waitFor, t)
			}
		}
		if len(waitFor) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("draining: waiting for commits of %s: %w", tableNames(waitFor), ctx.Err())
		case <-w.runDone:
			return fmt.Errorf("draining: waiting for commits of %s: %w", tableNames(waitFor), ErrStopped)
		case <-changed:
		case <-tick.C: // in case a change notification was missed
		}
	}
}

func tableNames(m map[string]map[string]bool) string {
	var names []string
	for t := range m {
		names = append(names, ledger.DisplayName(t))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
