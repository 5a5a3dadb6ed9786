package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	upsertsink "github.com/floe-io/floe/sinks/iceberg/upsert"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/ledger"
)

// Snapshot summary properties written by every Floe commit.
const (
	PropOffsets   = "floe.offsets"   // JSON {"topic/partition": next offset}
	PropCommitID  = "floe.commit-id" // unique id of the commit
	PropEntries   = "floe.entries"   // ledger entry ids, comma-separated
	PropCommitter = "floe.committer" // node id and epoch of the committer
)

// Offsets reads the floe.offsets summary property of a snapshot.
func Offsets(s *table.Snapshot) (map[string]int64, error) {
	out := map[string]int64{}
	if s == nil || s.Summary == nil {
		return out, nil
	}
	raw, ok := s.Summary.Properties[PropOffsets]
	if !ok {
		return out, nil
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("snapshot %d: parsing %s: %w", s.SnapshotID, PropOffsets, err)
	}
	return out, nil
}

// Commit implements worker.Sink. Entries are the oldest pending entries of
// the table, in order. Their data files become one append snapshot of the
// table, their dead-letter files one append snapshot of its dead-letter
// table, and both metadata pointers move in one replicated entry that also
// advances the committed offsets and removes the entries from the ledger.
func (s *Sink) Commit(ctx context.Context, key string, entries []ledger.Entry, committer ledger.Assignment, at time.Time) error {
	ident := ledger.TableIdent(key)
	name := ledger.DisplayName(key)
	req := &ledger.CommitRequest{Table: key, Committer: committer, CommitID: uuid.NewString(), At: at.UnixMilli()}
	for _, e := range entries {
		req.Entries = append(req.Entries, e.ID)
	}
	stage, apply := s.cat.Bind(req)
	tbl, err := apply.LoadTable(ctx, ident)
	if err != nil {
		return fmt.Errorf("committing table %s: %w", name, err)
	}
	g, err := gather(tbl, entries)
	if err != nil {
		return fmt.Errorf("committing table %s: %w", name, err)
	}
	dc, plan, err := s.prepareCommit(ctx, appendCommit{key: key, tbl: tbl, entries: entries, g: g, req: req, at: at})
	if err != nil {
		return fmt.Errorf("committing table %s: %w", name, err)
	}
	g = dc.g
	_, upsert := upsertsink.Of(tbl)
	offJSON, err := json.Marshal(g.offsets)
	if err != nil {
		return fmt.Errorf("committing table %s: %w", name, err)
	}
	props := iceberg.Properties{
		PropOffsets:   string(offJSON),
		PropCommitID:  req.CommitID,
		PropEntries:   strings.Join(g.ids, ","),
		PropCommitter: committer.Node + "@" + strconv.FormatUint(committer.Epoch, 10),
	}
	if len(g.dlq) > 0 {
		if err := s.stageDLQ(ctx, stage, key, g.dlq, props); err != nil {
			return err
		}
	} else if err := s.refreshDLQ(ctx, stage, key, g.offsets, props, at); err != nil { // dlqoffsets.go
		return err
	}

	tx := tbl.NewTransaction()
	switch {
	case upsert:
		err = commitUpsert(ctx, tx, tbl, g.files, plan, props)
	case len(g.files) > 0:
		err = tx.AddDataFiles(ctx, g.files, props, table.WithoutDuplicateCheck())
	default:
		// Nothing for the table itself (every record skipped or dead-
		// lettered): an empty append still records the offsets, so the
		// table says where it stands.
		err = tx.AddFiles(ctx, nil, props, false)
	}
	if err != nil {
		return fmt.Errorf("committing table %s: %w", name, err)
	}
	// Applies the staged dead-letter swap with the table's, and the ledger
	// commit, as one replicated entry.
	committed, err := tx.Commit(ctx)
	if err != nil {
		return fmt.Errorf("committing table %s: %w", name, err)
	}
	if upsert {
		// Only now: the index follows what is durable.
		s.keys.Record(key, plan, committed)
	}
	// The commit is durable: a dead-letter mirror that fails is retried
	// by the next commit or the commit loop's Settle, never failing this one.
	if s.follower != nil {
		if err := s.follower.MirrorDeadLetters(ctx, key, s.deadLetters(key, committer), at); err != nil {
			s.log.Warn("the dead-letter table's delta log lags its iceberg table; retrying", "table", name, "err", err)
		}
	}
	return nil
}

// prepareCommit plans an upsert commit's deletes and publishes the
// commit's follower version (with them) when the table writes one; that
// version comes before the entry that records it (followpublish.go), so a
// crash in between is found in the log's tail at the next attempt. When the log
// held a commit of fewer entries the commit becomes that one, planned
// again from the same table state.
func (s *Sink) prepareCommit(ctx context.Context, dc appendCommit) (appendCommit, upsertsink.Plan, error) {
	up, upsert := upsertsink.Of(dc.tbl)
	var plan upsertsink.Plan
	var err error
	if upsert {
		if plan, err = s.keys.Plan(ctx, dc.tbl, dc.key, up, dc.entries); err != nil {
			return dc, plan, err
		}
		dc.deletes = plan.Deletes
	}
	if !s.follows(dc.key) {
		if s.follower != nil {
			s.follower.Forget(dc.key) // the log misses this commit: sync it when it follows again
		}
		return dc, plan, nil
	}
	n := len(dc.entries)
	if dc.entries, dc.g, err = s.publishFollower(ctx, dc); err != nil {
		return dc, plan, err
	}
	if upsert && len(dc.entries) != n {
		plan, err = s.keys.Plan(ctx, dc.tbl, dc.key, up, dc.entries)
	}
	return dc, plan, err
}

// gathered is what a commit adds: the entries' ids, the table's data files,
// the dead-letter files' descriptors and the offsets after the commit.
type gathered struct {
	ids     []string
	files   []iceberg.DataFile
	dlq     []ledger.FileDescriptor
	offsets map[string]int64
}

// gather collects what entries add to tbl, the offsets from its current
// snapshot on.
func gather(tbl *table.Table, entries []ledger.Entry) (gathered, error) {
	var g gathered
	offsets, err := Offsets(tbl.CurrentSnapshot())
	if err != nil {
		return g, err
	}
	g.offsets = offsets
	for _, e := range entries {
		g.ids = append(g.ids, e.ID)
		for _, d := range e.Files {
			df, err := rebuild(tbl.Metadata(), d)
			if err != nil {
				return g, err
			}
			g.files = append(g.files, df)
		}
		g.dlq = append(g.dlq, e.DLQFiles...)
		for _, r := range e.Ranges {
			g.offsets[r.TopicPartition.String()] = r.To
		}
	}
	return g, nil
}

// stageDLQ stages the append of the dead-letter files of table key through
// stage: the catalog of record holds the swap in the commit's session and
// makes it with the table's.
func (s *Sink) stageDLQ(ctx context.Context, stage table.CatalogIO, key string, descriptors []ledger.FileDescriptor, props iceberg.Properties) error {
	name := ledger.DisplayName(key)
	dlqTbl, err := stage.LoadTable(ctx, DLQIdent(ledger.TableIdent(key)))
	if err != nil {
		return fmt.Errorf("committing dead-letter table of %s: %w", name, err)
	}
	var dlqFiles []iceberg.DataFile
	for _, d := range descriptors {
		df, err := rebuild(dlqTbl.Metadata(), d)
		if err != nil {
			return fmt.Errorf("committing dead-letter table of %s: %w", name, err)
		}
		dlqFiles = append(dlqFiles, df)
	}
	tx := dlqTbl.NewTransaction()
	if err := tx.AddDataFiles(ctx, dlqFiles, props, table.WithoutDuplicateCheck()); err != nil {
		return fmt.Errorf("committing dead-letter table of %s: %w", name, err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("staging dead-letter commit of %s: %w", name, err)
	}
	return nil
}
