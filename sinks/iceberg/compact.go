package iceberg

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"time"

	upsertsink "github.com/floe-io/floe/sinks/iceberg/upsert"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

// ErrCompactionConflict: files a rewrite replaces are no longer live (a
// real conflict, not just newer appends). The rewrite is abandoned; its new
// files become orphans and the next run plans again.
var ErrCompactionConflict = errors.New("compaction conflicts with the table's current files")

// Rewrite is a compaction computed in the background: new files written,
// nothing committed. It implements sink.Rewrite.
type Rewrite struct {
	Groups []table.CompactionGroupResult
	stats  sink.RewriteStats
	upsert *upsertRewrite // an upsert table's (upsertcompact.go)
}

// Stats implements sink.Rewrite.
func (r *Rewrite) Stats() sink.RewriteStats { return r.stats }

// compactionConfig turns a policy into iceberg-go's planner config. A small
// file is one below 75% of the target; a partition's small files are
// rewritten once there are MinInputFiles of them (HotMinInputFiles while
// the table is being written, so the newest data is not rewritten again and
// again while it is still arriving).
func compactionConfig(p sink.CompactionPolicy) compaction.Config {
	cfg := compaction.DefaultConfig()
	cfg.TargetFileSizeBytes = p.TargetFileSize
	cfg.MinFileSizeBytes = p.TargetFileSize * 3 / 4
	cfg.MaxFileSizeBytes = p.TargetFileSize * 9 / 5
	// eligible already applied the per-partition triggers; any group of two
	// or more small files in an eligible partition is worth rewriting.
	cfg.MinInputFiles = 2
	return cfg
}

// partitionKey identifies a data file's partition (spec and values).
func partitionKey(df iceberg.DataFile) string {
	part := df.Partition()
	ids := make([]int, 0, len(part))
	for id := range part {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	key := fmt.Sprint(df.SpecID())
	for _, id := range ids {
		key += fmt.Sprintf("|%d=%v", id, part[id])
	}
	return key
}

// eligible keeps the files of partitions whose small files should be
// rewritten now. A partition is hot when one of its files was committed
// within the cool-down (p.HotFiles); a hot partition qualifies only past
// HotMinInputFiles small files, so data still arriving is not rewritten over
// and over. A cold partition qualifies at MinInputFiles small files, or when
// small files are at least SmallRatio of its files (and at least two).
func eligible(tasks []table.FileScanTask, p sink.CompactionPolicy) []table.FileScanTask {
	type stats struct {
		files, small int
		hot          bool
	}
	parts := map[string]*stats{}
	for _, t := range tasks {
		k := partitionKey(t.File)
		st := parts[k]
		if st == nil {
			st = &stats{}
			parts[k] = st
		}
		st.files++
		if t.File.FileSizeBytes() < p.TargetFileSize*3/4 {
			st.small++
		}
		if p.Hot && (p.HotFiles == nil || p.HotFiles[path.Base(t.File.FilePath())]) {
			st.hot = true
		}
	}
	tiers := tierCaps(tasks, p.TargetFileSize*3/4)
	var out []table.FileScanTask
	for _, t := range tasks {
		k := partitionKey(t.File)
		st := parts[k]
		ok := st.small >= p.MinInputFiles || (p.SmallRatio > 0 && st.small >= 2 && float64(st.small) >= p.SmallRatio*float64(st.files))
		if st.hot {
			ok = st.small >= p.HotMinInputFiles
		}
		if size := t.File.FileSizeBytes(); size < p.TargetFileSize*3/4 && size > tiers[k] {
			ok = false // a larger small file waits for its tier (tierCaps)
		}
		if ok {
			out = append(out, t)
		}
	}
	return out
}

// tierRatio: a small file is rewritten only with at least 1/tierRatio of
// its size in smaller files (tierCaps).
const tierRatio = 2

// tierCaps returns, per partition, the largest small file (below small
// bytes) worth rewriting now: small files in ascending size, each taken
// while it is at most tierRatio times the sum of those before it.
//
// Why: without it every run rewrote all of a partition's small files,
// the output of the last run included. A quiet table never reaches the
// target size in hours (20 records/s is ~3 MB an hour), so each hot run
// (every 16 flushes) rewrote the whole partition again: rewritten bytes
// grew with the table's age, without bound (issue 38: 3x the data after 20
// minutes). With tiers a file is rewritten only into one at least half
// again as large, so each byte is rewritten about log1.5(target/flush)
// times, as in a size-tiered LSM.
func tierCaps(tasks []table.FileScanTask, small int64) map[string]int64 {
	sizes := map[string][]int64{}
	for _, t := range tasks {
		if n := t.File.FileSizeBytes(); n < small {
			k := partitionKey(t.File)
			sizes[k] = append(sizes[k], n)
		}
	}
	caps := make(map[string]int64, len(sizes))
	for k, ns := range sizes {
		slices.Sort(ns)
		var sum int64
		for _, n := range ns {
			if sum > 0 && n > tierRatio*sum {
				break
			}
			sum += n
			caps[k] = n
		}
	}
	return caps
}

// PlanRewrite plans bin-packing compaction of a table's small files per
// partition and writes the compacted files. It commits nothing: the
// committer commits the result with CommitRewrite, in order with appends.
// It first waits until this node has applied the log (the fence's
// barrier), so a node catching up does not read deleted metadata.
func (s *Sink) PlanRewrite(ctx context.Context, key string, p sink.CompactionPolicy) (sink.Rewrite, error) {
	name := ledger.DisplayName(key)
	if err := s.caughtUp(ctx, key); err != nil {
		return nil, fmt.Errorf("compacting %s: %w", name, err)
	}
	tbl, err := s.cat.LoadTable(ctx, ledger.TableIdent(key))
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return &Rewrite{}, nil // created on first data
	}
	if err != nil {
		return nil, fmt.Errorf("compacting %s: %w", name, err)
	}
	if tbl.CurrentSnapshot() == nil {
		return &Rewrite{}, nil
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("compacting %s: planning files: %w", name, err)
	}
	rw := &Rewrite{}
	for _, t := range tasks {
		rw.stats.DataFiles++
		rw.stats.Bytes += t.File.FileSizeBytes()
		if t.File.FileSizeBytes() < p.TargetFileSize*3/4 {
			rw.stats.SmallFiles++
		}
	}
	if _, upsert := upsertsink.Of(tbl); upsert {
		// The rewrite applies the position deletes and drops the delete
		// files it covers; the key index, which then reflects an older
		// snapshot, is rebuilt at the next commit.
		if err := planUpsertRewrite(ctx, tbl, tasks, p, rw); err != nil {
			return nil, fmt.Errorf("compacting %s: %w", name, err)
		}
		return rw, nil
	}
	plan, err := compactionConfig(p).PlanCompaction(eligible(tasks, p))
	if err != nil {
		return nil, fmt.Errorf("compacting %s: %w", name, err)
	}
	budget := p.MaxBytes
	for _, g := range plan.Groups {
		if g.TotalSizeBytes > budget {
			continue // the hourly cap; a later run takes it
		}
		// Written and recorded as appends are (partpath.go).
		gr, err := table.ExecuteCompactionGroup(ctx, shortNamed(tbl),
			table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes},
			table.WithCompactionTargetFileSize(p.TargetFileSize))
		if err == nil {
			gr.NewDataFiles, err = shortFiles(tbl.Metadata(), tbl.Location(), gr.NewDataFiles)
		}
		if err != nil {
			return nil, fmt.Errorf("compacting %s: rewriting partition %q: %w", name, g.PartitionKey, err)
		}
		if len(gr.OldDataFiles) == 0 {
			continue
		}
		budget -= g.TotalSizeBytes
		rw.add(gr, p.TargetFileSize)
	}
	return rw, nil
}

// add appends a rewritten group to rw and counts it in its stats; a new
// file under three quarters of target counts as small.
func (rw *Rewrite) add(gr table.CompactionGroupResult, target int64) {
	rw.Groups = append(rw.Groups, gr)
	rw.stats.FilesBefore += len(gr.OldDataFiles)
	rw.stats.FilesAfter += len(gr.NewDataFiles)
	rw.stats.BytesBefore += gr.BytesBefore
	rw.stats.BytesAfter += gr.BytesAfter
	for _, df := range gr.NewDataFiles {
		if df.FileSizeBytes() < target*3/4 {
			rw.stats.SmallAfter++
		}
	}
}

// CommitRewrite commits a rewrite on top of the table's latest snapshot:
// appends committed since the rewrite was planned only add files, so the
// rewrite rebases over them; if any file it replaces is gone, it is
// abandoned with ErrCompactionConflict. The snapshot carries the current
// floe.offsets, so the table still says where it stands. The commit is
// fenced by committer.
func (s *Sink) CommitRewrite(ctx context.Context, key string, w sink.Rewrite, committer ledger.Assignment, at time.Time) error {
	rw, ok := w.(*Rewrite)
	if !ok || rw == nil || len(rw.Groups) == 0 {
		return nil
	}
	name := ledger.DisplayName(key)
	tbl, err := s.bindMaintenance(key, committer, at).LoadTable(ctx, ledger.TableIdent(key))
	if err != nil {
		return fmt.Errorf("committing compaction of %s: %w", name, err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("committing compaction of %s: %w", name, err)
	}
	live := map[string]bool{}
	for _, t := range tasks {
		live[t.File.FilePath()] = true
	}
	for _, g := range rw.Groups {
		for _, df := range g.OldDataFiles {
			if !live[df.FilePath()] {
				return fmt.Errorf("committing compaction of %s: %s: %w", name, df.FilePath(), ErrCompactionConflict)
			}
		}
	}
	if rw.upsert != nil {
		fresh, err := s.refreshUpsertRewrite(ctx, name, tbl, tasks, rw) // upsertcompact.go
		if err != nil {
			return fmt.Errorf("committing compaction of %s: %w", name, err)
		}
		*rw = *fresh // the caller reads the stats of what is committed
		if len(rw.Groups) == 0 {
			return nil
		}
	}
	props := iceberg.Properties{PropCommitID: uuid.NewString(), "floe.operation": "compaction"}
	if cur := tbl.CurrentSnapshot(); cur != nil && cur.Summary != nil {
		if off, ok := cur.Summary.Properties[PropOffsets]; ok {
			props[PropOffsets] = off
		}
	}
	tx := tbl.NewTransaction()
	rf := tx.NewRewrite(props)
	for _, g := range rw.Groups {
		rf.ApplyResult(g)
	}
	if err := rf.Commit(ctx); err != nil {
		return fmt.Errorf("committing compaction of %s: %w", name, err)
	}
	after, err := tx.Commit(ctx)
	if err != nil {
		return fmt.Errorf("committing compaction of %s: %w", name, err)
	}
	if s.follows(key) {
		return s.rearrangeFollower(ctx, key, after, rw, props[PropCommitID], committer, at)
	}
	return nil
}
