package iceberg

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

// Table properties of an upsert table, set from its mapping when the
// table is prepared: the committer, compaction and readers see the mode
// with the table.
const (
	PropMode      = "floe.mode"       // "upsert"; absent or "append": append
	PropUpsertKey = "floe.upsert-key" // key fields, comma-separated; empty: the Kafka record key
)

const modeUpsert = "upsert" // PropMode's value

// ErrNoKeyIndex: an upsert table's commit needs the node's key index.
var ErrNoKeyIndex = errors.New("no key index is configured for upsert tables")

// upsertSpec is how an upsert table finds its keys.
type upsertSpec struct {
	keyCols []string // empty: the Kafka record key
}

// upsertOf reads the mode of tbl from its properties.
func upsertOf(tbl *table.Table) (upsertSpec, bool) {
	props := tbl.Properties()
	if props[PropMode] != modeUpsert {
		return upsertSpec{}, false
	}
	var up upsertSpec
	if k := props[PropUpsertKey]; k != "" {
		up.keyCols = strings.Split(k, ",")
	}
	return up, true
}

// setMode records the mapping's mode and upsert key in the table's
// properties when they differ.
func (s *Sink) setMode(ctx context.Context, tbl *table.Table, t sink.TableSpec) (*table.Table, error) {
	props := tbl.Properties()
	mode, key := "", ""
	if t.Upsert() {
		mode, key = modeUpsert, strings.Join(t.UpsertKey, ",")
	}
	if props[PropMode] == mode && props[PropUpsertKey] == key {
		return tbl, nil
	}
	tx := tbl.NewTransaction()
	var err error
	if mode == "" {
		err = tx.RemoveProperties([]string{PropMode, PropUpsertKey})
	} else {
		// A rewind's delete then writes position deletes instead of
		// rewriting files: a copy-on-write rewrite of a file could carry
		// rows an earlier position delete removed back into the table.
		err = tx.SetProperties(iceberg.Properties{PropMode: mode, PropUpsertKey: key,
			table.WriteDeleteModeKey: table.WriteModeMergeOnRead})
	}
	if err != nil {
		return nil, fmt.Errorf("setting the mode of %s: %w", ledger.DisplayName(t.Key), err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("committing the mode of %s: %w", ledger.DisplayName(t.Key), err)
	}
	s.log.Info("table mode set", "table", ledger.DisplayName(t.Key), "mode", cmp.Or(mode, "append"), "key", key)
	return tbl, nil
}

// SetKeyIndexPath names the node's key index file, opened at the first
// commit of an upsert table (a node without one has no file); set once
// before use.
func (s *Sink) SetKeyIndexPath(path string) { s.keyPath = path }

// keyIndex returns the key index, opening it the first time.
func (s *Sink) keyIndex() (*KeyIndex, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys != nil {
		return s.keys, nil
	}
	if s.keyPath == "" {
		return nil, ErrNoKeyIndex
	}
	x, err := OpenKeyIndex(s.keyPath)
	if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) {
		// A damaged index is only derived state: set it aside and start
		// an empty one, which every table rebuilds at its next commit.
		aside := s.keyPath + ".damaged"
		s.log.Warn("key index damaged; setting it aside and rebuilding", "path", s.keyPath, "aside", aside, "err", err)
		if rerr := os.Rename(s.keyPath, aside); rerr != nil {
			return nil, fmt.Errorf("setting the damaged key index aside: %w", rerr)
		}
		x, err = OpenKeyIndex(s.keyPath)
	}
	if err != nil {
		return nil, err
	}
	s.keys = x
	return x, nil
}

// Close closes the key index, if open. The commit loops must have
// stopped.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		return nil
	}
	err := s.keys.Close()
	s.keys = nil
	return err
}

// upsertPlan is what one commit of an upsert table changes: the rows it
// deletes and each key's new state.
type upsertPlan struct {
	deletes []posDelete
	changes []keyChange
	x       *KeyIndex // the index planned against
}

// planUpsert brings the table's index to its current snapshot and plans
// the deletes of the entries' rows: within the commit, per partition, the
// row with the higher offset wins; a key's previous live row is deleted;
// a tombstone's own row is deleted too. A row without a key is kept and
// never replaced.
func (s *Sink) planUpsert(ctx context.Context, tbl *table.Table, key string, up upsertSpec, entries []ledger.Entry) (upsertPlan, error) {
	var plan upsertPlan
	x, err := s.keyIndex()
	if err != nil {
		return plan, err
	}
	plan.x = x
	fs, err := tbl.FS(ctx)
	if err != nil {
		return plan, err
	}
	stray, err := s.syncIndex(ctx, x, tbl, key, up)
	if err != nil {
		return plan, err
	}
	plan.deletes = stray
	latest := map[string]*keyChange{} // tp + 0 + key: this commit's state
	for _, e := range entries {
		rows, err := entryRows(ctx, fs, e, up)
		if err != nil {
			return plan, err
		}
		for _, r := range rows {
			if r.tomb {
				plan.deletes = append(plan.deletes, posDelete{r.path, r.pos})
			}
			if r.key == nil {
				continue
			}
			id := r.tp + "\x00" + string(r.key)
			if c, ok := latest[id]; ok && !c.gone {
				plan.deletes = append(plan.deletes, posDelete{c.ref.path, c.ref.pos})
			}
			c := &keyChange{tp: r.tp, key: r.key, gone: r.tomb, ref: rowRef{path: r.path, pos: r.pos, offset: r.offset}}
			latest[id] = c
		}
	}
	for _, c := range latest {
		plan.changes = append(plan.changes, *c)
	}
	// Each key's row before this commit goes: looked up in one read of
	// the index.
	prev, err := x.previous(key, plan.changes)
	if err != nil {
		return plan, err
	}
	plan.deletes = append(plan.deletes, prev...)
	slices.SortFunc(plan.deletes, func(a, b posDelete) int {
		return cmp.Or(strings.Compare(a.path, b.path), cmp.Compare(a.pos, b.pos))
	})
	plan.deletes = slices.Compact(plan.deletes)
	return plan, nil
}

// entryRow is a keyed row of an entry's file.
type entryRow struct {
	keyedRow
	path string
	tomb bool
}

// entryRows reads the keyed rows of an entry's data files, ordered by
// partition and offset (the order the records had in Kafka).
func entryRows(ctx context.Context, fs icebergio.IO, e ledger.Entry, up upsertSpec) ([]entryRow, error) {
	tombs := map[string]map[int64]bool{}
	for tp, offs := range e.Tombstones {
		m := map[int64]bool{}
		for _, o := range offs {
			m[o] = true
		}
		tombs[tp] = m
	}
	var out []entryRow
	for _, d := range e.Files {
		rows, err := readKeyedRows(ctx, fs, d.Path, up.keyCols)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out = append(out, entryRow{keyedRow: r, path: d.Path, tomb: tombs[r.tp][r.offset]})
		}
	}
	slices.SortStableFunc(out, func(a, b entryRow) int {
		return cmp.Or(strings.Compare(a.tp, b.tp), cmp.Compare(a.offset, b.offset))
	})
	return out, nil
}

// commitUpsert adds the entries' files and the plan's position-delete
// file to tx in one row delta: one snapshot, so a reader sees a key's new
// row and the end of its old one together, and a crash leaves both or
// neither.
func commitUpsert(ctx context.Context, tx *table.Transaction, tbl *table.Table, files []iceberg.DataFile, plan upsertPlan, props iceberg.Properties) error {
	if len(files) == 0 && len(plan.deletes) == 0 {
		return tx.AddFiles(ctx, nil, props, false)
	}
	rd := tx.NewRowDelta(props).AddRows(files...)
	if len(plan.deletes) > 0 {
		fs, err := tbl.FS(ctx)
		if err != nil {
			return err
		}
		groups, err := deleteGroups(ctx, tbl, files, plan.deletes) // upsertparts.go
		if err != nil {
			return err
		}
		for _, g := range groups {
			del, err := writePosDeletes(fs, tbl.Location(), g.spec, g.partition, g.dels)
			if err != nil {
				return err
			}
			rd.AddDeletes(del)
		}
	}
	return rd.Commit(ctx)
}

// recordUpsert updates the index after the commit that made snapshot is
// durable. A failure leaves the index behind the table, which the next
// commit sees and rebuilds from: it is logged, not returned, since the
// commit itself stands.
func (s *Sink) recordUpsert(key string, plan upsertPlan, committed *table.Table) {
	snap := committed.CurrentSnapshot()
	if snap == nil {
		return
	}
	if err := plan.x.apply(key, plan.changes, snap.SnapshotID); err != nil {
		s.log.Warn("key index not updated; the next commit rebuilds it", "table", ledger.DisplayName(key), "err", err)
		return
	}
	s.upsertStats(key, func(st *sink.UpsertStats) {
		st.DeleteFiles += boolInt(len(plan.deletes) > 0)
		st.DeletedRows += int64(len(plan.deletes))
	})
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Upsert returns the counters of table key, false when this node has
// committed no upsert commit of it since it started.
func (s *Sink) Upsert(key string) (sink.UpsertStats, bool) {
	s.mu.Lock()
	st, ok := s.upserts[key]
	x := s.keys
	s.mu.Unlock()
	if ok && x != nil {
		st.Keys, _ = x.Keys(key)
		st.IndexFileBytes = x.FileBytes()
	}
	return st, ok
}

func (s *Sink) upsertStats(key string, fn func(*sink.UpsertStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.upserts == nil {
		s.upserts = map[string]sink.UpsertStats{}
	}
	st := s.upserts[key]
	fn(&st)
	s.upserts[key] = st
}
