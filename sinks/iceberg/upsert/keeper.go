package upsert

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

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
	PropMode = "floe.mode"       // Mode; absent or "append": append
	PropKey  = "floe.upsert-key" // key fields, comma-separated; empty: the Kafka record key
	Mode     = "upsert"          // PropMode's value
)

// ErrNoIndex: an upsert table's commit needs the node's key index.
var ErrNoIndex = errors.New("no key index is configured for upsert tables")

// Spec is how an upsert table finds its keys.
type Spec struct {
	KeyCols []string // empty: the Kafka record key
}

// Of reads the mode of tbl from its properties: false for an append table.
func Of(tbl *table.Table) (Spec, bool) {
	props := tbl.Properties()
	if props[PropMode] != Mode {
		return Spec{}, false
	}
	var up Spec
	if k := props[PropKey]; k != "" {
		up.KeyCols = strings.Split(k, ",")
	}
	return up, true
}

// Keeper is a node's upsert state: its key index (opened at the first
// upsert commit) and what its committers did per table. Each table's
// calls come from that table's commit loop; the index and the counters
// are shared, hence the mutex.
type Keeper struct {
	log *slog.Logger

	mu    sync.Mutex
	path  string                      // the key index file (SetPath)
	x     *Index                      // opened at the first upsert commit
	stats map[string]sink.UpsertStats // by table key
}

// NewKeeper returns a node's upsert state; log nil is slog.Default().
func NewKeeper(log *slog.Logger) *Keeper {
	if log == nil {
		log = slog.Default()
	}
	return &Keeper{log: log, stats: map[string]sink.UpsertStats{}}
}

// SetPath names the node's key index file, opened at the first commit of
// an upsert table (a node without one has no file); set once before use.
func (k *Keeper) SetPath(path string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.path = path
}

// Index returns the key index, opening it the first time.
func (k *Keeper) Index() (*Index, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.x != nil {
		return k.x, nil
	}
	if k.path == "" {
		return nil, ErrNoIndex
	}
	x, err := OpenIndex(k.path)
	if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) {
		// A damaged index is only derived state: set it aside and start
		// an empty one, which every table rebuilds at its next commit.
		aside := k.path + ".damaged"
		k.log.Warn("key index damaged; setting it aside and rebuilding", "path", k.path, "aside", aside, "err", err)
		if rerr := os.Rename(k.path, aside); rerr != nil {
			return nil, fmt.Errorf("setting the damaged key index aside: %w", rerr)
		}
		x, err = OpenIndex(k.path)
	}
	if err != nil {
		return nil, err
	}
	k.x = x
	return x, nil
}

// Close closes the key index, if open. The commit loops must have
// stopped.
func (k *Keeper) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.x == nil {
		return nil
	}
	err := k.x.Close()
	k.x = nil
	return err
}

// Stats returns the counters of table key, false when this node has
// committed no upsert commit of it since it started.
func (k *Keeper) Stats(key string) (sink.UpsertStats, bool) {
	k.mu.Lock()
	st, ok := k.stats[key]
	x := k.x
	k.mu.Unlock()
	if ok && x != nil {
		st.Keys, _ = x.Keys(key)
		st.IndexFileBytes = x.FileBytes()
	}
	return st, ok
}

func (k *Keeper) count(key string, fn func(*sink.UpsertStats)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	st := k.stats[key]
	fn(&st)
	k.stats[key] = st
}

// Plan is what one commit of an upsert table changes: the rows it deletes
// (sorted by path and position, as a position-delete file must be) and
// each key's new state.
type Plan struct {
	Deletes []Delete
	changes []change
	x       *Index // the index planned against
}

// Plan brings the table's index to its current snapshot and plans the
// deletes of the entries' rows: within the commit, per partition, the row
// with the higher offset wins; a key's previous live row is deleted; a
// tombstone's own row is deleted too. A row without a key is kept and
// never replaced.
func (k *Keeper) Plan(ctx context.Context, tbl *table.Table, key string, up Spec, entries []ledger.Entry) (Plan, error) {
	var plan Plan
	x, err := k.Index()
	if err != nil {
		return plan, err
	}
	plan.x = x
	fs, err := tbl.FS(ctx)
	if err != nil {
		return plan, err
	}
	stray, err := k.sync(ctx, x, tbl, key, up)
	if err != nil {
		return plan, err
	}
	plan.Deletes = stray
	latest := map[string]*change{} // tp + 0 + key: this commit's state
	for _, e := range entries {
		rows, err := entryRows(ctx, fs, e, up)
		if err != nil {
			return plan, err
		}
		for _, r := range rows {
			if r.tomb {
				plan.Deletes = append(plan.Deletes, Delete{r.path, r.pos})
			}
			if r.key == nil {
				continue
			}
			id := r.tp + "\x00" + string(r.key)
			if c, ok := latest[id]; ok && !c.gone {
				plan.Deletes = append(plan.Deletes, Delete{c.ref.path, c.ref.pos})
			}
			latest[id] = &change{tp: r.tp, key: r.key, gone: r.tomb, ref: rowRef{path: r.path, pos: r.pos, offset: r.offset}}
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
	plan.Deletes = append(plan.Deletes, prev...)
	slices.SortFunc(plan.Deletes, func(a, b Delete) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Pos, b.Pos))
	})
	plan.Deletes = slices.Compact(plan.Deletes)
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
func entryRows(ctx context.Context, fs icebergio.IO, e ledger.Entry, up Spec) ([]entryRow, error) {
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
		rows, err := readKeyedRows(ctx, fs, d.Path, up.KeyCols)
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

// Record updates the index after the commit that made committed's
// current snapshot is durable. A failure leaves the index behind the
// table, which the next commit sees and rebuilds from: it is logged, not
// returned, since the commit itself stands.
func (k *Keeper) Record(key string, plan Plan, committed *table.Table) {
	snap := committed.CurrentSnapshot()
	if snap == nil {
		return
	}
	if err := plan.x.apply(key, plan.changes, snap.SnapshotID); err != nil {
		k.log.Warn("key index not updated; the next commit rebuilds it", "table", ledger.DisplayName(key), "err", err)
		return
	}
	k.count(key, func(st *sink.UpsertStats) {
		st.DeleteFiles += boolInt(len(plan.Deletes) > 0)
		st.DeletedRows += int64(len(plan.Deletes))
	})
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// sync makes the index of table key reflect tbl's current snapshot.
// An index that reflects it is used as it is; any other (none, behind
// after a crash between a commit and its index update, built on another
// node, or from before a rewrite) is rebuilt from the table: every live
// keyed row, deletes applied. Two live rows of one key in a partition (a
// table that was append before) keep the one of the higher offset; the
// others come back as stray, for the next commit to delete.
func (k *Keeper) sync(ctx context.Context, x *Index, tbl *table.Table, key string, up Spec) (stray []Delete, err error) {
	var want int64
	if snap := tbl.CurrentSnapshot(); snap != nil {
		want = snap.SnapshotID
	}
	have, ok, err := x.Snapshot(key)
	if err != nil {
		return nil, err
	}
	if ok && have == want {
		return nil, nil
	}
	start := time.Now()
	name := ledger.DisplayName(key)
	if err := x.drop(key); err != nil {
		return nil, err
	}
	rows := int64(0)
	if want != 0 {
		if stray, rows, err = rebuildIndex(ctx, x, tbl, key, up); err != nil {
			return nil, fmt.Errorf("rebuilding the key index of %s: %w", name, err)
		}
	}
	if err := x.apply(key, nil, want); err != nil {
		return nil, err
	}
	took := time.Since(start)
	k.log.Info("key index rebuilt", "table", name, "snapshot", want, "rows", rows, "stray", len(stray), "took", took)
	k.count(key, func(st *sink.UpsertStats) {
		st.Rebuilds++
		st.RebuildTime += took
		st.LastRebuildRow = rows
	})
	return stray, nil
}
