package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/ledger"
)

// DLQOffsetsMaxAge bounds how far behind its table's a dead-letter table's
// floe.offsets may stay when no dead letters arrive: a commit of the table
// that finds the dead-letter table's current snapshot older than this (and
// its offsets different) also commits an empty snapshot of the dead-letter
// table carrying the table's summary.
//
// Why a time bound and not one snapshot per commit: an empty snapshot costs
// a manifest list and a metadata file, and tables commit every
// commit_interval (seconds): one per commit would double the metadata a
// table that rarely dead-letters writes, for a table readers seldom look
// at. A minute keeps it to 1,440 small snapshots a day at most, which
// expiry trims like any other. Stale offsets are never wrong: the
// dead-letter table holds every dead letter below its recorded offsets and
// none was committed between those and its table's (a dead letter commits
// a snapshot carrying the newer offsets), so a reader learns only later
// that no dead letter came. Maintenance (Expire, every minute on the
// committer) brings them level, so a table that goes idle does not leave
// them behind for good.
const DLQOffsetsMaxAge = time.Minute

// refreshDLQ stages, under the commit's session, an empty append of the
// dead-letter table of key carrying props (the commit's summary, whose
// floe.offsets are offsets) when the dead-letter table exists and its
// recorded offsets differ from offsets and are older than DLQOffsetsMaxAge
// at at. It commits with the table, in the same replicated entry.
func (s *Sink) refreshDLQ(ctx context.Context, stage table.CatalogIO, key string, offsets map[string]int64, props iceberg.Properties, at time.Time) error {
	name := ledger.DisplayName(key)
	dlqTbl, err := stage.LoadTable(ctx, DLQIdent(ledger.TableIdent(key)))
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil // no dead letter yet: no table to keep current
	}
	if err != nil {
		return fmt.Errorf("committing dead-letter table of %s: %w", name, err)
	}
	if cur := dlqTbl.CurrentSnapshot(); cur != nil {
		have, err := Offsets(cur)
		if err == nil && maps.Equal(have, offsets) {
			return nil
		}
		if err == nil && at.Sub(time.UnixMilli(cur.TimestampMs)) < DLQOffsetsMaxAge {
			return nil
		}
	}
	if err := commitEmpty(ctx, dlqTbl, props); err != nil {
		return fmt.Errorf("staging the offsets of the dead-letter table of %s: %w", name, err)
	}
	return nil
}

// alignDLQ commits, as maintenance of table key (fenced by committer, moving
// no ledger offsets), an empty snapshot of its dead-letter table carrying
// the table's current floe.offsets, when the two differ.
func (s *Sink) alignDLQ(ctx context.Context, key string, committer ledger.Assignment, at time.Time) error {
	name := ledger.DisplayName(key)
	bound := s.bindMaintenance(key, committer, at)
	tbl, err := bound.LoadTable(ctx, ledger.TableIdent(key))
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("advancing the offsets of the dead-letter table of %s: %w", name, err)
	}
	dlqTbl, err := bound.LoadTable(ctx, DLQIdent(ledger.TableIdent(key)))
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("advancing the offsets of the dead-letter table of %s: %w", name, err)
	}
	want, err := Offsets(tbl.CurrentSnapshot())
	if err != nil || len(want) == 0 {
		return err
	}
	if have, err := Offsets(dlqTbl.CurrentSnapshot()); err == nil && maps.Equal(have, want) {
		return nil
	}
	raw, err := json.Marshal(want)
	if err != nil {
		return fmt.Errorf("advancing the offsets of the dead-letter table of %s: %w", name, err)
	}
	props := iceberg.Properties{PropOffsets: string(raw), PropCommitID: uuid.NewString(), "floe.operation": "offsets"}
	if err := commitEmpty(ctx, dlqTbl, props); err != nil {
		return fmt.Errorf("advancing the offsets of the dead-letter table of %s: %w", name, err)
	}
	return nil
}

// commitEmpty commits a snapshot of tbl that adds no file and carries props
// in its summary (through tbl's catalog: a stage, or the bound catalog).
func commitEmpty(ctx context.Context, tbl *table.Table, props iceberg.Properties) error {
	tx := tbl.NewTransaction()
	if err := tx.AddFiles(ctx, nil, props, false); err != nil {
		return fmt.Errorf("adding no files: %w", err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("committing: %w", err)
	}
	return nil
}
