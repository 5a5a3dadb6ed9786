package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// CommitTable implements catalog.Catalog and table.CatalogIO: a plain
// commit (table creation, spec alignment by a pipeline, a REST client) is
// a compare-and-swap of the table's pointer alone, fenced by no committer.
// A committer's commits go through Bind.
func (c *Catalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	return c.commit(ctx, ident, reqs, updates, nil, false)
}

// commit writes the updated metadata, then stages its swap in s (stage) or
// applies one CommitTables entry: the swap alone without a session, else
// the session's command.
func (c *Catalog) commit(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update, s *session, stage bool) (table.Metadata, string, error) {
	name := strings.Join(ident, ".")
	cur, updated, newLoc, err := c.writeUpdated(ctx, ident, reqs, updates)
	if err != nil {
		return nil, "", fmt.Errorf("committing table %s: %w", name, err)
	}
	swap := fsm.TableSwap{Table: ledger.TableKey(ident), Expected: cur, New: newLoc}
	if stage {
		s.hold(swap)
		c.remember(newLoc, updated)
		return updated, newLoc, nil
	}
	cmd := fsm.CommitTables{Swaps: []fsm.TableSwap{swap}}
	if s != nil {
		cmd = s.command(swap)
	}
	if idx, err := c.node.Apply(ctx, cmd); err != nil {
		// A forwarded commit may have been applied although its answer was
		// lost (the leader died mid-call), and then sent again: the copy
		// is refused by the compare-and-swap. Read the state as of the
		// refusal to tell that apart from a real refusal.
		if idx > 0 {
			_ = c.node.WaitApplied(ctx, idx)
		}
		if !c.swapsCurrent(cmd.Swaps) {
			c.removeRefused(ctx, cmd, err)
			return nil, "", err
		}
	}
	if s != nil {
		s.applied()
	}
	c.remember(newLoc, updated)
	return updated, newLoc, nil
}

// writeUpdated validates the requirements against the table's current
// metadata, applies the updates and writes the result as the next metadata
// version. It returns the current location, the new metadata and its
// location.
func (c *Catalog) writeUpdated(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (cur string, updated table.Metadata, newLoc string, err error) {
	cur, err = c.MetadataLocation(ident)
	if err != nil {
		return "", nil, "", err
	}
	base, err := c.metadataAt(ctx, cur)
	if err != nil {
		return "", nil, "", err
	}
	for _, r := range reqs {
		if err := r.Validate(base); err != nil {
			// A failed requirement means someone committed in between:
			// iceberg-go retries ErrCommitFailed after refreshing.
			return "", nil, "", commitFailed("%v", err)
		}
	}
	ts, err := stampSnapshots(base, updates, c.clock.now())
	if err != nil {
		return "", nil, "", err
	}
	updated, err = table.UpdateTableMetadata(base, updates, cur)
	if err != nil {
		return "", nil, "", err
	}
	if updated, err = restamp(updated, ts); err != nil {
		return "", nil, "", err
	}
	v := MetadataVersion(cur)
	if v < 0 {
		return "", nil, "", fmt.Errorf("cannot parse metadata version of %s", cur)
	}
	newLoc, err = c.writeMetadata(ctx, updated, v+1)
	if err != nil {
		return "", nil, "", err
	}
	return cur, updated, newLoc, nil
}

// removeRefused removes the metadata files of a commit the FSM refused:
// nothing points at them, so removing them now rather than leaving them to
// orphan cleanup means a recovery walk (package recovery) meets fewer
// candidates. Staged files go only on a terminal refusal: iceberg-go retries
// ErrCommitFailed in the same session, which reuses them. Any other error
// (a Raft timeout) is ambiguous: keep everything.
//
// Unlike orphan cleanup, this deletion needs no read barrier (DESIGN.md,
// invariant 10): the files are the ones this very proposal wrote, under
// names no other command carries (version and a fresh uuid), and the
// refusal is the replicated log's own verdict, which every node applies
// alike, so no state, current or future, can point at them.
func (c *Catalog) removeRefused(ctx context.Context, cmd fsm.CommitTables, err error) {
	terminal := ledger.Refused(err) || errors.Is(err, fsm.ErrStaleCommitter)
	if !terminal && !errors.Is(err, table.ErrCommitFailed) {
		return
	}
	newLoc := cmd.Swaps[len(cmd.Swaps)-1].New
	dead := []string{newLoc}
	for i := 0; terminal && i < len(cmd.Swaps)-1; i++ {
		dead = append(dead, cmd.Swaps[i].New)
	}
	if fs, ferr := c.fsF(newLoc)(ctx); ferr == nil {
		for _, loc := range dead {
			if !c.isPointer(loc) {
				_ = fs.Remove(loc) // best effort: orphan cleanup is the fallback
			}
		}
	}
}

// commitFailed marks a refused compare-and-swap the way iceberg-go expects:
// the caller refreshes the table and tries again.
func commitFailed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", table.ErrCommitFailed, fmt.Sprintf(format, args...))
}

// swapsCurrent reports whether every swap's new location is its table's
// current pointer: the commit took effect.
func (c *Catalog) swapsCurrent(swaps []fsm.TableSwap) bool {
	ok := len(swaps) > 0
	c.readState(func(s *fsm.State) {
		for _, sw := range swaps {
			if t, found := s.Tables[sw.Table]; !found || t.MetadataLocation != sw.New {
				ok = false
			}
		}
	})
	return ok
}

// isPointer reports whether loc is any table's current metadata location.
func (c *Catalog) isPointer(loc string) bool {
	found := false
	c.readState(func(s *fsm.State) {
		for _, t := range s.Tables {
			if t.MetadataLocation == loc {
				found = true
			}
		}
	})
	return found
}
