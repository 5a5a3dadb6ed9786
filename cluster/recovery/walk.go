package recovery

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// metaStep is one metadata file of a table's chain.
type metaStep struct {
	loc  string
	meta table.Metadata
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
	if i < 0 || catalog.MetadataVersion(start) < 0 {
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
		v := catalog.MetadataVersion(cur.loc)
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
func adopt(t *fsm.Table, chain []metaStep) {
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
