package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/ledger"
)

// Recovery from total loss (floe serve --recover): every Raft disk is gone,
// the state backup (backup.go) and the tables are what is left. The backup
// may be up to one interval old; the tables are not, and every Floe snapshot
// says which offsets it holds (floe.offsets, invariant 2). Recover takes the
// backup's catalog and moves each table forward to its newest committed
// metadata file, and each partition's committed offset to what that file's
// current snapshot says, whichever is newer. The new cluster then fetches
// every partition from there: nothing committed is lost or written twice.

// ErrNoBackup: the warehouse holds no state backup to recover from. (Its
// sibling ErrNotEmpty, refusing a restore into a live cluster, is in
// errors.go with the other sentinels the RPC layer maps.)
var ErrNoBackup = errors.New("no state backup")

// Snapshot summary properties that Floe commits write (sinks/iceberg defines
// them; cluster/ must not import sinks/, so they are repeated here).
const (
	summaryOffsets   = "floe.offsets"
	summaryCommitID  = "floe.commit-id"
	summaryOperation = "floe.operation"
)

func init() { registry[CmdRestoreState] = decodeApply(applyRestoreState) }

// Recover reads the state backup of warehouse and returns the state a new
// cluster starts from, to be proposed as one RestoreState command:
//
//   - Namespaces, Tables and Sources as backed up; members and committer
//     roles cleared (the new cluster's nodes register and are assigned anew;
//     committer epochs restart at 1, which is safe because the fence only
//     matters within one Raft log and nothing of the old log reaches the new
//     one). Partition assignments keep their epochs with no holder, so the
//     next assignment takes epoch+1 and epochs keep growing even across
//     recoveries.
//   - Pending ledger entries dropped: their files were never committed and
//     become orphans for orphan cleanup; their offsets are fetched again.
//   - Every table's pointer advanced along its committed metadata files
//     (walk), and each partition's Committed = End = max(backup, summary).
//
// Rows, Files and the other counters stay as backed up and may be behind by
// the commits made after the backup. Tables created after the backup are
// not found (their files stay, unreferenced) and tables dropped after it
// come back; both are bounded by the backup interval.
func Recover(ctx context.Context, warehouse string, props iceberg.Properties, log *slog.Logger) (*State, error) {
	if log == nil {
		log = slog.Default()
	}
	loc := BackupLocation(warehouse)
	r := &recoverer{ctx: ctx, props: props, log: log.With("component", "recover"), ios: map[string]icebergio.IO{}, parsed: map[string]table.Metadata{}}
	data, err := r.readFile(loc)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("recovering from %s: %w", loc, ErrNoBackup)
	}
	if err != nil {
		return nil, fmt.Errorf("recovering from %s: %w", loc, err)
	}
	backup, err := DecodeSnapshot(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("recovering from %s: %w", loc, err)
	}
	st := restartState(backup)

	// Main tables first: a dead-letter table may only move as far as its
	// table did (walkDLQ).
	var mains, dlqs []string
	for _, key := range st.TableKeys() {
		if isDLQTable(st, key) {
			dlqs = append(dlqs, key)
		} else {
			mains = append(mains, key)
		}
	}
	commitIDs := map[string]map[string]bool{}
	for _, key := range mains {
		chain, err := r.walk(key, st.Tables[key].MetadataLocation, nil)
		if err != nil {
			return nil, fmt.Errorf("recovering table %s: %w", ledger.DisplayName(key), err)
		}
		adopt(st.Tables[key], chain)
		if err := mergeOffsets(st.Ledger, key, chain[len(chain)-1].meta); err != nil {
			return nil, fmt.Errorf("recovering table %s: %w", ledger.DisplayName(key), err)
		}
		commitIDs[key] = chainCommitIDs(chain)
		r.logTable(key, chain)
	}
	for _, key := range dlqs {
		main := strings.TrimSuffix(key, "_dlq")
		chain, err := r.walk(key, st.Tables[key].MetadataLocation, pairedWith(commitIDs[main]))
		if err != nil {
			return nil, fmt.Errorf("recovering table %s: %w", ledger.DisplayName(key), err)
		}
		adopt(st.Tables[key], chain)
		r.logTable(key, chain)
	}
	if err := st.Ledger.Validate(); err != nil {
		return nil, fmt.Errorf("recovered ledger is inconsistent: %w", err)
	}
	return st, nil
}

// restartState keeps what outlives the old members and resets the rest.
func restartState(b *State) *State {
	st := NewState()
	st.Namespaces, st.Tables, st.Sources = b.Namespaces, b.Tables, b.Sources
	st.Ledger.Offsets = b.Ledger.Offsets
	for _, offs := range st.Ledger.Offsets {
		for _, o := range offs {
			o.End = o.Committed // pending entries are dropped
		}
	}
	for tp, a := range b.Ledger.Assignments {
		st.Ledger.Assignments[tp] = ledger.Assignment{Epoch: a.Epoch}
	}
	return st
}

// isDLQTable reports whether key is the dead-letter table of another table:
// its main table exists and no source routes into it (a mapping could name a
// table ..._dlq on purpose; then it is a table of its own).
func isDLQTable(st *State, key string) bool {
	main, ok := strings.CutSuffix(key, "_dlq")
	if !ok || st.Tables[main] == nil {
		return false
	}
	for _, src := range st.Sources {
		if src.Table == key {
			return false
		}
	}
	return true
}

// metaStep is one metadata file of a table's chain.
type metaStep struct {
	loc  string
	meta table.Metadata
}

type recoverer struct {
	ctx    context.Context
	props  iceberg.Properties
	log    *slog.Logger
	ios    map[string]icebergio.IO   // scheme://authority -> IO
	parsed map[string]table.Metadata // location -> metadata, nil if unparsable
}

// walk follows a table's metadata files forward from start, the pointer the
// backup holds, and returns the chain it adopts (start first).
//
// Every commit writes <location>/metadata/<v+1>-<uuid>.metadata.json built on
// the current pointer v (its metadata-log ends with v), then swaps the
// pointer in Raft. So a file at v+1 whose metadata-log ends with the current
// file descends from it; any other file at v+1 is debris of another line and
// never adopted. A descendant is either the commit that was applied or an
// attempt that was not (refused, or lost with the cluster):
//
//   - exactly one descendant: adopt it. Even if its swap was never applied,
//     the file is a complete table state whose floe.offsets match its data,
//     and nothing else was committed on top of v (a later commit would have
//     written a second file at v+1), so the table and offsets agree.
//   - several: files are only ever built on the pointer, so a descendant
//     that itself has a descendant at v+2 was the pointer once. Adopt it if
//     exactly one has; otherwise the tip is ambiguous and the walk stops at
//     v. Staying one commit behind is safe: the offsets come from v's
//     summary, so the newer commit's records are fetched and written once
//     more, and its files become orphans.
//
// accept, when set, further filters descendants (dead-letter pairing).
// A commit that changed nothing (no metadata-log entry appended) breaks the
// chain; the walk stops there, which is safe for the same reason.
func (r *recoverer) walk(key, start string, accept func(prev, next table.Metadata) bool) ([]metaStep, error) {
	i := strings.LastIndex(start, "/")
	if i < 0 || metadataVersion(start) < 0 {
		return nil, fmt.Errorf("cannot parse metadata version of %s", start)
	}
	dir := start[:i]
	startMeta, err := r.metadata(start)
	if err != nil {
		return nil, err
	}
	if startMeta == nil {
		return nil, fmt.Errorf("backed-up metadata %s is unreadable", start)
	}
	files, err := r.list(dir)
	if err != nil {
		return nil, err
	}
	chain := []metaStep{{loc: start, meta: startMeta}}
	for {
		cur := chain[len(chain)-1]
		v := metadataVersion(cur.loc)
		var desc []metaStep
		for _, loc := range files[v+1] {
			m, err := r.metadata(loc)
			if err != nil {
				return nil, err
			}
			if m == nil || parentOf(m) != cur.loc {
				continue
			}
			if accept != nil && !accept(cur.meta, m) {
				r.log.Info("not adopting metadata: its commit is not in the table it pairs with",
					"table", ledger.DisplayName(key), "metadata", loc)
				continue
			}
			desc = append(desc, metaStep{loc: loc, meta: m})
		}
		if len(desc) > 1 {
			var withChild []metaStep
			for _, d := range desc {
				has, err := r.hasChild(d.loc, files[v+2])
				if err != nil {
					return nil, err
				}
				if has {
					withChild = append(withChild, d)
				}
			}
			if len(withChild) != 1 {
				r.log.Warn("ambiguous newest metadata: staying one commit behind",
					"table", ledger.DisplayName(key), "metadata", cur.loc, "candidates", len(desc))
			}
			desc = withChild
		}
		if len(desc) != 1 {
			return chain, nil
		}
		chain = append(chain, desc[0])
	}
}

func (r *recoverer) hasChild(loc string, candidates []string) (bool, error) {
	for _, c := range candidates {
		m, err := r.metadata(c)
		if err != nil {
			return false, err
		}
		if m != nil && parentOf(m) == loc {
			return true, nil
		}
	}
	return false, nil
}

// parentOf returns the metadata file m was built on: the last entry of its
// metadata-log ("" for a table's first file).
func parentOf(m table.Metadata) string {
	prev := ""
	for e := range m.PreviousFiles() {
		prev = e.MetadataFile
	}
	return prev
}

// pairedWith accepts a dead-letter table's next file only if it adds no
// snapshot of its own pairing (schema change, expiry, compaction: those
// commit alone) or its snapshot's floe.commit-id is one of the main table's
// adopted commits. A table and its dead-letter table commit in one Raft
// entry with one commit id, so this keeps them together: the dead-letter
// table never gets ahead of its table, and moves exactly as far.
func pairedWith(ids map[string]bool) func(prev, next table.Metadata) bool {
	return func(prev, next table.Metadata) bool {
		ns := next.CurrentSnapshot()
		if ns == nil {
			return true
		}
		if ps := prev.CurrentSnapshot(); ps != nil && ps.SnapshotID == ns.SnapshotID {
			return true
		}
		if ns.Summary == nil {
			return true
		}
		id := ns.Summary.Properties[summaryCommitID]
		if id == "" || ns.Summary.Properties[summaryOperation] == "compaction" {
			return true
		}
		return ids[id]
	}
}

// chainCommitIDs returns the floe.commit-id of every snapshot the chain's
// files hold: the commits the main table has after recovery.
func chainCommitIDs(chain []metaStep) map[string]bool {
	ids := map[string]bool{}
	for _, s := range chain {
		for _, snap := range s.meta.Snapshots() {
			if snap.Summary != nil && snap.Summary.Properties[summaryCommitID] != "" {
				ids[snap.Summary.Properties[summaryCommitID]] = true
			}
		}
	}
	return ids
}

// adopt moves a table's pointer to the chain's tip.
func adopt(t *Table, chain []metaStep) {
	if len(chain) < 2 {
		return
	}
	tip := chain[len(chain)-1]
	t.PreviousMetadataLocation = chain[len(chain)-2].loc
	t.MetadataLocation = tip.loc
	t.Commits += int64(len(chain) - 1)
	t.LastCommitAt = tip.meta.LastUpdatedMillis()
}

// mergeOffsets raises each partition's committed offset in the ledger to
// what the table's current snapshot says, whichever is newer, with End =
// Committed (nothing is pending). A partition the backup did not know yet
// starts at the summary's offset.
func mergeOffsets(l *ledger.Ledger, key string, meta table.Metadata) error {
	snap := meta.CurrentSnapshot()
	if snap == nil || snap.Summary == nil {
		return nil
	}
	raw, ok := snap.Summary.Properties[summaryOffsets]
	if !ok {
		return nil
	}
	var offs map[string]int64
	if err := json.Unmarshal([]byte(raw), &offs); err != nil {
		return fmt.Errorf("snapshot %d: parsing %s: %w", snap.SnapshotID, summaryOffsets, err)
	}
	if l.Offsets[key] == nil {
		l.Offsets[key] = map[string]*ledger.Offsets{}
	}
	for tp, next := range offs {
		o := l.Offsets[key][tp]
		if o == nil {
			l.Offsets[key][tp] = &ledger.Offsets{Start: next, Committed: next, End: next}
			continue
		}
		o.Committed = max(o.Committed, next)
		o.End = o.Committed
	}
	return nil
}

func (r *recoverer) logTable(key string, chain []metaStep) {
	tip := chain[len(chain)-1]
	r.log.Info("table recovered", "table", ledger.DisplayName(key),
		"backed_up", chain[0].loc, "metadata", tip.loc, "commits_after_backup", len(chain)-1)
}

// io returns the FileIO for loc, one per bucket (s3 clients are not free).
func (r *recoverer) io(loc string) (icebergio.IO, error) {
	root := loc
	if i := strings.Index(loc, "://"); i >= 0 {
		if j := strings.Index(loc[i+3:], "/"); j >= 0 {
			root = loc[:i+3+j]
		}
	}
	if fsys, ok := r.ios[root]; ok {
		return fsys, nil
	}
	fsys, err := icebergio.LoadFS(r.ctx, r.props, loc)
	if err != nil {
		return nil, fmt.Errorf("opening storage for %s: %w", loc, err)
	}
	r.ios[root] = fsys
	return fsys, nil
}

func (r *recoverer) readFile(loc string) ([]byte, error) {
	fsys, err := r.io(loc)
	if err != nil {
		return nil, err
	}
	rfs, ok := fsys.(icebergio.ReadFileIO)
	if !ok {
		return nil, fmt.Errorf("storage for %s cannot read files", loc)
	}
	data, err := rfs.ReadFile(loc)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", loc, err)
	}
	return data, nil
}

// metadata reads and parses a metadata file. An unparsable file (a write
// cut short) is no candidate: it returns nil metadata and no error. Failing
// to read is an error: guessing past an unreadable file could skip a commit.
func (r *recoverer) metadata(loc string) (table.Metadata, error) {
	if m, ok := r.parsed[loc]; ok {
		return m, nil
	}
	data, err := r.readFile(loc)
	if err != nil {
		return nil, err
	}
	m, err := table.ParseMetadataBytes(data)
	if err != nil {
		r.log.Warn("skipping unparsable metadata file", "metadata", loc, "err", err)
		m = nil
	}
	r.parsed[loc] = m
	return m, nil
}

// list returns the metadata files directly in dir by version.
func (r *recoverer) list(dir string) (map[int][]string, error) {
	fsys, err := r.io(dir)
	if err != nil {
		return nil, err
	}
	lfs, ok := fsys.(icebergio.ListableIO)
	if !ok {
		return nil, fmt.Errorf("storage for %s cannot list files", dir)
	}
	out := map[int][]string{}
	root := true
	err = lfs.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			if root {
				root = false
				return nil
			}
			return fs.SkipDir
		}
		root = false
		// Local walks yield OS paths, blob walks URIs: only the name is
		// used, joined to dir so candidates are spelled like the pointer.
		name := path.Base(filepath.ToSlash(p))
		if v := metadataVersion("/" + name); v >= 0 {
			out[v] = append(out[v], dir+"/"+name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	for _, locs := range out {
		slices.Sort(locs)
	}
	return out, nil
}

// applyRestoreState installs a recovered state into a new cluster. It is
// refused once the cluster has any table, source or offset, so a replayed
// or late RestoreState can never roll a live cluster back. Members that
// registered already stay; committer roles are left to the controller.
func applyRestoreState(s *State, c *RestoreState) error {
	if c.State == nil {
		return fmt.Errorf("restoring state: the command carries no state")
	}
	if len(s.Tables) > 0 || len(s.Sources) > 0 || len(s.Ledger.Offsets) > 0 || len(s.Ledger.Pending) > 0 {
		return fmt.Errorf("restoring state into a cluster with %d tables and %d sources: %w", len(s.Tables), len(s.Sources), ErrNotEmpty)
	}
	in := c.State
	l := in.Ledger
	if l == nil {
		l = ledger.New()
	}
	if len(l.Pending) > 0 {
		return fmt.Errorf("restoring state: %d tables have pending entries; a restored ledger holds committed offsets only", len(l.Pending))
	}
	offsets := l.Offsets
	if offsets == nil {
		offsets = map[string]map[string]*ledger.Offsets{}
	}
	check := &ledger.Ledger{Offsets: offsets, Pending: map[string][]ledger.Entry{}, Assignments: map[string]ledger.Assignment{}}
	if err := check.Validate(); err != nil {
		return fmt.Errorf("restoring state: ledger is inconsistent: %w", err)
	}
	for key, t := range in.Tables {
		if t == nil || len(t.Ident) < 2 || ledger.TableKey(t.Ident) != key || t.MetadataLocation == "" {
			return fmt.Errorf("restoring state: table %s is malformed", ledger.DisplayName(key))
		}
	}
	// Validation passed: apply. Namespaces merge (one the new cluster made
	// already takes the restored properties); epochs never go back.
	maps.Copy(s.Namespaces, in.Namespaces)
	s.Tables = in.Tables
	if s.Tables == nil {
		s.Tables = map[string]*Table{}
	}
	s.Sources = in.Sources
	if s.Sources == nil {
		s.Sources = map[string]*TopicSource{}
	}
	s.Ledger.Offsets = offsets
	for tp, a := range l.Assignments {
		if cur, ok := s.Ledger.Assignments[tp]; !ok || a.Epoch > cur.Epoch {
			s.Ledger.Assignments[tp] = a
		}
	}
	return nil
}

// ReadBackup reads and validates the state backup of a warehouse as it was
// written, without recovering anything. It wraps ErrNoBackup when there is
// none.
func ReadBackup(ctx context.Context, warehouse string, props iceberg.Properties) (*State, error) {
	r := &recoverer{ctx: ctx, props: props, log: slog.Default(), ios: map[string]icebergio.IO{}, parsed: map[string]table.Metadata{}}
	loc := BackupLocation(warehouse)
	data, err := r.readFile(loc)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", loc, ErrNoBackup)
	}
	if err != nil {
		return nil, err
	}
	st, err := DecodeSnapshot(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", loc, err)
	}
	return st, nil
}
