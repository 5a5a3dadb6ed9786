package ledger

import (
	"fmt"
	"slices"
)

// Offsets is where one topic-partition stands in one table.
type Offsets struct {
	// Start is the first offset ever recorded for the partition in the table.
	Start int64 `json:"start"`
	// Committed is the next offset after the last committed one: the table
	// holds exactly [Start, Committed).
	Committed int64 `json:"committed"`
	// End is the next offset after the last recorded (maybe uncommitted) one.
	// A fetcher resumes here.
	End int64 `json:"end"`
	// NewestTS is the newest record timestamp (unix ms) committed for the
	// partition: its lag in time is measured from it.
	NewestTS int64 `json:"newest_ts,omitempty"`
}

// Assignment says which node fetches a partition, fenced by an epoch that
// grows every time the partition moves.
type Assignment struct {
	Node  string `json:"node"`
	Epoch uint64 `json:"epoch"`
}

// Ledger is the pure exactly-once bookkeeping of all tables. The zero value is
// not usable; call New. It is not safe for concurrent use: the FSM serializes
// access.
type Ledger struct {
	// Offsets: table key -> topic-partition string -> offsets.
	Offsets map[string]map[string]*Offsets `json:"offsets"`
	// Pending: table key -> recorded, uncommitted entries in record order.
	Pending map[string][]Entry `json:"pending"`
	// Assignments: topic-partition string -> current holder and epoch.
	Assignments map[string]Assignment `json:"assignments"`
}

// New returns an empty ledger.
func New() *Ledger {
	return &Ledger{
		Offsets:     map[string]map[string]*Offsets{},
		Pending:     map[string][]Entry{},
		Assignments: map[string]Assignment{},
	}
}

// Assign sets the holder and epoch of a partition. Epochs only grow; an older
// or equal epoch for a different node is refused so a replayed or reordered
// assignment can never resurrect a fenced holder.
func (l *Ledger) Assign(tp TopicPartition, a Assignment) error {
	cur, ok := l.Assignments[tp.String()]
	if ok && a.Epoch <= cur.Epoch && a.Node != cur.Node {
		return fmt.Errorf("assigning %s to %s at epoch %d (current %d): %w", tp, a.Node, a.Epoch, cur.Epoch, ErrStaleEpoch)
	}
	if ok && a.Epoch < cur.Epoch {
		return fmt.Errorf("assigning %s at epoch %d (current %d): %w", tp, a.Epoch, cur.Epoch, ErrStaleEpoch)
	}
	l.Assignments[tp.String()] = a
	return nil
}

// Position returns where a partition stands in a table and whether the ledger
// knows it at all (a partition never recorded is unknown).
func (l *Ledger) Position(table string, tp TopicPartition) (Offsets, bool) {
	o, ok := l.Offsets[table][tp.String()]
	if !ok {
		return Offsets{}, false
	}
	return *o, true
}

// Check validates an entry against the ledger without changing it.
func (l *Ledger) Check(table string, e Entry) error {
	if e.ID == "" {
		return fmt.Errorf("entry without id: %w", ErrInvalidEntry)
	}
	if len(e.Ranges) == 0 {
		return fmt.Errorf("entry %s covers no offsets: %w", e.ID, ErrInvalidEntry)
	}
	for _, p := range l.Pending[table] {
		if p.ID == e.ID {
			return fmt.Errorf("entry %s recorded twice: %w", e.ID, ErrInvalidEntry)
		}
	}
	seen := map[string]bool{}
	for _, r := range e.Ranges {
		key := r.TopicPartition.String()
		if seen[key] {
			return fmt.Errorf("entry %s covers %s twice: %w", e.ID, key, ErrInvalidEntry)
		}
		seen[key] = true
		if r.From < 0 || r.To <= r.From {
			return fmt.Errorf("entry %s has empty range %s [%d,%d): %w", e.ID, key, r.From, r.To, ErrInvalidEntry)
		}
		a, ok := l.Assignments[key]
		if !ok {
			return fmt.Errorf("recording %s: %w", key, ErrNotAssigned)
		}
		if a.Epoch != r.Epoch || a.Node != e.Node {
			return fmt.Errorf("recording %s from %s at epoch %d (held by %s at epoch %d): %w",
				key, e.Node, r.Epoch, a.Node, a.Epoch, ErrStaleEpoch)
		}
		if o, ok := l.Offsets[table][key]; ok {
			switch {
			case r.From > o.End:
				return fmt.Errorf("recording %s from offset %d, ledger ends at %d: %w", key, r.From, o.End, ErrGap)
			case r.From < o.End:
				return fmt.Errorf("recording %s from offset %d, ledger ends at %d: %w", key, r.From, o.End, ErrOverlap)
			}
		}
	}
	return nil
}

// Record appends an entry to a table's pending list after Check accepts it,
// and moves each covered partition's end to the end of its range.
func (l *Ledger) Record(table string, e Entry) error {
	if err := l.Check(table, e); err != nil {
		return err
	}
	offs := l.Offsets[table]
	if offs == nil {
		offs = map[string]*Offsets{}
		l.Offsets[table] = offs
	}
	for _, r := range e.Ranges {
		key := r.TopicPartition.String()
		o, ok := offs[key]
		if !ok {
			// First sight of this partition in this table: its first range
			// defines the start, typically the earliest retained offset.
			o = &Offsets{Start: r.From, Committed: r.From, End: r.From}
			offs[key] = o
		}
		o.End = r.To
	}
	l.Pending[table] = append(l.Pending[table], e)
	return nil
}

// CheckCommit validates that ids name exactly the oldest pending entries of a
// table, in order.
func (l *Ledger) CheckCommit(table string, ids []string) error {
	pending := l.Pending[table]
	if len(ids) > len(pending) {
		return fmt.Errorf("committing %d entries of table %s, %d pending: %w", len(ids), table, len(pending), ErrUnknownEntry)
	}
	for i, id := range ids {
		if pending[i].ID != id {
			if slices.ContainsFunc(pending, func(e Entry) bool { return e.ID == id }) {
				return fmt.Errorf("committing entry %s of table %s out of order: %w", id, table, ErrNotOldest)
			}
			return fmt.Errorf("committing entry %s of table %s: %w", id, table, ErrUnknownEntry)
		}
	}
	return nil
}

// Commit removes the oldest len(ids) entries of a table (which must be ids, in
// order) and advances each covered partition's committed offset. It returns
// the removed entries.
func (l *Ledger) Commit(table string, ids []string) ([]Entry, error) {
	if err := l.CheckCommit(table, ids); err != nil {
		return nil, err
	}
	pending := l.Pending[table]
	done := slices.Clone(pending[:len(ids)])
	for _, e := range done {
		for _, r := range e.Ranges {
			o := l.Offsets[table][r.TopicPartition.String()]
			// Record guaranteed contiguity, so the oldest entry of a
			// partition always starts at its committed offset.
			o.Committed = r.To
			o.NewestTS = max(o.NewestTS, r.MaxTS)
		}
	}
	rest := slices.Clone(pending[len(ids):])
	if len(rest) == 0 {
		delete(l.Pending, table)
	} else {
		l.Pending[table] = rest
	}
	return done, nil
}

// DropTable forgets a table's offsets and pending entries.
func (l *Ledger) DropTable(table string) {
	delete(l.Offsets, table)
	delete(l.Pending, table)
}

// Validate checks the ledger's invariants: for every partition of every table
// Start <= Committed <= End, and the pending ranges of the partition chain
// without gap or overlap from Committed to End. Tests call it after every
// step; the FSM calls it after restoring a snapshot.
func (l *Ledger) Validate() error {
	for table, offs := range l.Offsets {
		next := map[string]int64{}
		for key, o := range offs {
			if o.Start > o.Committed || o.Committed > o.End {
				return fmt.Errorf("table %s partition %s: start %d committed %d end %d out of order", table, key, o.Start, o.Committed, o.End)
			}
			next[key] = o.Committed
		}
		for _, e := range l.Pending[table] {
			for _, r := range e.Ranges {
				key := r.TopicPartition.String()
				n, ok := next[key]
				if !ok {
					return fmt.Errorf("table %s entry %s covers unknown partition %s", table, e.ID, key)
				}
				if r.From != n {
					return fmt.Errorf("table %s partition %s: entry %s starts at %d, expected %d", table, key, e.ID, r.From, n)
				}
				next[key] = r.To
			}
		}
		for key, n := range next {
			if n != offs[key].End {
				return fmt.Errorf("table %s partition %s: pending ranges end at %d, ledger end %d", table, key, n, offs[key].End)
			}
		}
	}
	for table := range l.Pending {
		if _, ok := l.Offsets[table]; !ok {
			return fmt.Errorf("table %s has pending entries but no offsets", table)
		}
	}
	return nil
}
