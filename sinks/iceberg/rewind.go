package iceberg

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/ledger"
)

// DeleteFrom implements worker.Sink: the delete of a replace rewind. It
// removes the rows of each named partition at or after its offset (a
// copy-on-write delete: files holding only such rows go, files holding some
// are rewritten) and commits that as one snapshot whose floe.offsets carry
// the new positions. The replicated commit carries the rewind generation,
// so the state marks the delete done in the same entry that swaps the
// pointer: a crash before it leaves the delete owed, after it done.
func (s *Sink) DeleteFrom(ctx context.Context, key string, from map[ledger.TopicPartition]int64, gen uint64, committer ledger.Assignment, at time.Time) (int64, error) {
	name := ledger.DisplayName(key)
	// The session reads req when the delete commits, after DeletedRows is
	// known.
	req := &ledger.CommitRequest{Table: key, Committer: committer, CommitID: uuid.NewString(), At: at.UnixMilli(), RewindGen: gen}
	_, apply := s.cat.Bind(req)
	tbl, err := apply.LoadTable(ctx, ledger.TableIdent(key))
	if err != nil {
		return 0, fmt.Errorf("deleting rows of %s for rewind %d: %w", name, gen, err)
	}
	offsets, err := Offsets(tbl.CurrentSnapshot())
	if err != nil {
		return 0, fmt.Errorf("deleting rows of %s for rewind %d: %w", name, gen, err)
	}
	var filter iceberg.BooleanExpression = iceberg.AlwaysFalse{}
	tps := slices.SortedFunc(maps.Keys(from), func(a, b ledger.TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
	for _, tp := range tps {
		off := from[tp]
		one := iceberg.NewAnd(
			iceberg.EqualTo(iceberg.Reference(ColTopic), tp.Topic),
			iceberg.EqualTo(iceberg.Reference(ColPartition), tp.Partition),
			iceberg.GreaterThanEqual(iceberg.Reference(ColOffset), off))
		filter = iceberg.NewOr(filter, one)
		if cur, ok := offsets[tp.String()]; !ok || cur > off {
			offsets[tp.String()] = off
		}
	}
	offJSON, err := json.Marshal(offsets)
	if err != nil {
		return 0, err
	}
	props := iceberg.Properties{
		PropOffsets:      string(offJSON),
		PropCommitID:     req.CommitID,
		PropCommitter:    committer.Node + "@" + strconv.FormatUint(committer.Epoch, 10),
		"floe.operation": "rewind-replace",
		"floe.rewind":    strconv.FormatUint(gen, 10),
	}
	before := totalRecords(tbl.CurrentSnapshot())
	tx := tbl.NewTransaction()
	if err := tx.Delete(ctx, filter, props); err != nil {
		return 0, fmt.Errorf("deleting rows of %s for rewind %d: %w", name, gen, err)
	}
	if staged, err := tx.StagedTable(); err == nil {
		if after := totalRecords(staged.CurrentSnapshot()); before >= 0 && after >= 0 {
			req.DeletedRows = before - after
		}
	}
	after, err := tx.Commit(ctx)
	if err != nil {
		return 0, fmt.Errorf("committing the delete of %s for rewind %d: %w", name, gen, err)
	}
	if s.follows(key) {
		// The delete rewrote or dropped files: the follower's log follows
		// with their removes and adds. A failure is synced later.
		if err := s.follower.Resync(ctx, s.followedTable(key, after, committer), at); err != nil {
			s.log.Warn("syncing the delta log after a replace delete failed; the next commit syncs it", "table", name, "err", err)
		}
	}
	return req.DeletedRows, nil
}

// totalRecords reads a snapshot's total-records summary, -1 if unknown; an
// empty table (no snapshot) holds 0.
func totalRecords(s *table.Snapshot) int64 {
	if s == nil {
		return 0
	}
	if s.Summary == nil {
		return -1
	}
	n, err := strconv.ParseInt(s.Summary.Properties["total-records"], 10, 64)
	if err != nil {
		return -1
	}
	return n
}
