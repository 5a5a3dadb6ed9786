package worker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
)

// ErrNotPaused: a resume with skip named a table that is not suspended at a
// bad record on any node.
var ErrNotPaused = errors.New("table is not suspended at a bad record")

// ErrNoSuchTable: no pipeline of this node writes the named table.
var ErrNoSuchTable = errors.New("no such table on this node")

// ResumeResult says what a resume did.
type ResumeResult struct {
	Table string `json:"table"`
	// Skips are the records a suspended table is resumed past, if skip:
	// whichever node fetches them consumes them as skipped.
	Skips []status.SuspendedRecord `json:"skips,omitempty"`
	// Message is the answer for people: what was skipped, or that a
	// table suspended at a bad record stops at it again without skip.
	Message string `json:"message,omitempty"`
}

// Resume restarts a table (namespace.name) suspended at a bad record or
// whose topics are paused at an incompatible schema, on every node: it
// proposes a replicated resume, and every node's pipeline of the table
// un-suspends and un-pauses when it applies it. With skip, the records the
// table is suspended at (on this node, and those the caller found on other
// nodes, in elsewhere) are consumed as skipped wherever they are fetched,
// also after a crash, until the table commits past them. A paused topic
// re-reads the table's schema (an operator may have evolved it by hand) and
// decodes the record again.
func (w *Worker) Resume(ctx context.Context, table string, skip bool, elsewhere ...status.SuspendedRecord) (ResumeResult, error) {
	w.mu.Lock()
	key := ""
	for k := range w.pipelines {
		if ledger.DisplayName(k) == table || k == table {
			key = k
		}
	}
	w.mu.Unlock()
	if key == "" {
		return ResumeResult{}, fmt.Errorf("%w: %s", ErrNoSuchTable, table)
	}
	res := ResumeResult{Table: ledger.DisplayName(key)}
	var skips map[ledger.TopicPartition]int64
	if skip {
		found := slices.Clone(elsewhere)
		if ts, _ := w.status.Snapshot(); ts[key].SuspendedAt != nil {
			found = append(found, *ts[key].SuspendedAt)
		}
		skips = map[ledger.TopicPartition]int64{}
		for _, r := range found {
			skips[ledger.TopicPartition{Topic: r.Topic, Partition: r.Partition}] = r.Offset
		}
		if len(skips) == 0 {
			return res, fmt.Errorf("%w: %s", ErrNotPaused, table)
		}
		for _, tp := range slices.SortedFunc(maps.Keys(skips), func(a, b ledger.TopicPartition) int {
			return compareTP(a, b)
		}) {
			res.Skips = append(res.Skips, status.SuspendedRecord{Topic: tp.Topic, Partition: tp.Partition, Offset: skips[tp]})
		}
	}
	if err := w.prop.ResumeTable(ctx, key, skips); err != nil {
		return res, fmt.Errorf("proposing the resume of %s: %w", table, err)
	}
	w.log.Info("table resume proposed", "table", res.Table, "skip", skip, "skips", len(res.Skips))
	return res, nil
}

func compareTP(a, b ledger.TopicPartition) int {
	switch {
	case a.Topic < b.Topic:
		return -1
	case a.Topic > b.Topic:
		return 1
	}
	return int(a.Partition - b.Partition)
}
