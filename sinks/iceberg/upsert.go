package iceberg

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	upsertsink "github.com/floe-io/floe/sinks/iceberg/upsert"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

// Table properties of an upsert table (sinks/iceberg/upsert's), set from
// its mapping when the table is prepared: the committer, compaction and
// readers see the mode with the table.
const (
	PropMode      = upsertsink.PropMode
	PropUpsertKey = upsertsink.PropKey
)

// setMode records the mapping's mode and upsert key in the table's
// properties when they differ.
func (s *Sink) setMode(ctx context.Context, tbl *table.Table, t sink.TableSpec) (*table.Table, error) {
	props := tbl.Properties()
	mode, key := "", ""
	if t.Upsert() {
		mode, key = upsertsink.Mode, strings.Join(t.UpsertKey, ",")
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
func (s *Sink) SetKeyIndexPath(path string) { s.keys.SetPath(path) }

// Close closes the key index, if open. The commit loops must have
// stopped.
func (s *Sink) Close() error { return s.keys.Close() }

// Upsert returns the counters of table key, false when this node has
// committed no upsert commit of it since it started.
func (s *Sink) Upsert(key string) (sink.UpsertStats, bool) { return s.keys.Stats(key) }

// commitUpsert adds the entries' files and the plan's position-delete
// file to tx in one row delta: one snapshot, so a reader sees a key's new
// row and the end of its old one together, and a crash leaves both or
// neither.
func commitUpsert(ctx context.Context, tx *table.Transaction, tbl *table.Table, files []iceberg.DataFile, plan upsertsink.Plan, props iceberg.Properties) error {
	if len(files) == 0 && len(plan.Deletes) == 0 {
		return tx.AddFiles(ctx, nil, props, false)
	}
	rd := tx.NewRowDelta(props).AddRows(files...)
	if len(plan.Deletes) > 0 {
		dels, err := upsertsink.WriteDeletes(ctx, tbl, files, plan.Deletes)
		if err != nil {
			return err
		}
		rd.AddDeletes(dels...)
	}
	return rd.Commit(ctx)
}
