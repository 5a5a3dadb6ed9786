package iceberg

import (
	"context"
	"fmt"

	upsertsink "github.com/floe-io/floe/sinks/iceberg/upsert"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/sinks/sink"
)

// upsertRewrite is what compaction of an upsert table needs at its commit
// besides the rewrite itself: the snapshot it read and the delete files
// live then, to tell whether a commit since deleted rows of the files it
// rewrote (those rows are in the new files, so committing would bring
// them back).
type upsertRewrite struct {
	snapshot int64
	deletes  map[string]bool // delete files live at the snapshot
	policy   sink.CompactionPolicy
}

// planUpsertRewrite plans compaction of an upsert table into rw: a group
// per partition of every data file that has position deletes and every
// small one, read with the deletes applied, so the new files hold live
// rows only. The delete files whose every row targets a
// file the rewrite replaces (or one no longer in the table) are removed in
// the same commit. It runs when the table has at least MinInputFiles
// delete files or small files (HotMinInputFiles while being written), and
// within the byte budget.
func planUpsertRewrite(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask, p sink.CompactionPolicy, rw *Rewrite) error {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	dels, err := upsertsink.LiveDeleteFiles(fs, tbl.CurrentSnapshot())
	if err != nil {
		return err
	}
	rw.upsert = &upsertRewrite{snapshot: tbl.CurrentSnapshot().SnapshotID, deletes: map[string]bool{}, policy: p}
	for _, d := range dels {
		rw.upsert.deletes[d.FilePath()] = true
	}
	var (
		in    []table.FileScanTask
		size  int64
		small int
	)
	for _, t := range tasks {
		isSmall := t.File.FileSizeBytes() < p.TargetFileSize*3/4
		if len(t.DeleteFiles) == 0 && !isSmall {
			continue
		}
		if size+t.File.FileSizeBytes() > p.MaxBytes {
			continue // the hourly cap; a later run takes it
		}
		in = append(in, t)
		size += t.File.FileSizeBytes()
		if isSmall {
			small++
		}
	}
	need := max(2, p.MinInputFiles)
	if p.Hot {
		need = max(2, p.HotMinInputFiles)
	}
	if len(in) == 0 || (len(dels) < need && small < need) {
		return nil
	}
	var old []iceberg.DataFile
	for _, g := range byPartition(in) {
		// Written and recorded as appends are (partpath.go).
		gr, err := table.ExecuteCompactionGroup(ctx, shortNamed(tbl), g, table.WithCompactionTargetFileSize(p.TargetFileSize))
		if err == nil {
			gr.NewDataFiles, err = shortFiles(tbl.Metadata(), tbl.Location(), gr.NewDataFiles)
		}
		if err != nil {
			return fmt.Errorf("rewriting partition %q with deletes applied: %w", g.PartitionKey, err)
		}
		// iceberg-go's safe list is every delete file matched to a
		// rewritten file, which would drop deletes of files kept:
		// deadDeletes below decides, once for all groups.
		gr.SafePosDeletes = nil
		old = append(old, gr.OldDataFiles...)
		rw.add(gr, p.TargetFileSize)
	}
	// The delete files no live row needs once every group is replaced,
	// removed once (with the first group): the groups commit together.
	dead, err := deadDeletes(ctx, fs, tasks, old, dels)
	if err != nil {
		return err
	}
	rw.Groups[0].SafePosDeletes = dead
	rw.stats.DeleteFilesRemoved += len(dead)
	return nil
}

// byPartition groups tasks by their data file's partition (spec id and
// values), in a stable order: a compaction group's files must share one.
func byPartition(tasks []table.FileScanTask) []table.CompactionTaskGroup {
	idx := map[string]int{}
	var out []table.CompactionTaskGroup
	for _, t := range tasks {
		id := upsertsink.PartitionID(t.File)
		i, ok := idx[id]
		if !ok {
			i = len(out)
			idx[id] = i
			out = append(out, table.CompactionTaskGroup{PartitionKey: id})
		}
		out[i].Tasks = append(out[i].Tasks, t)
		out[i].TotalSizeBytes += t.File.FileSizeBytes()
	}
	return out
}

// deadDeletes returns the position-delete files of dels that no live row
// needs once old is replaced: every row of theirs targets a file of old or
// one no longer in the table. A delete file that targets any other live
// file stays (iceberg-go's "safe" list is every delete file matched to a
// rewritten file, which would drop deletes of files kept).
func deadDeletes(ctx context.Context, fs icebergio.IO, tasks []table.FileScanTask, old []iceberg.DataFile, dels []iceberg.DataFile) ([]iceberg.DataFile, error) {
	replaced := map[string]bool{}
	for _, df := range old {
		replaced[df.FilePath()] = true
	}
	kept := map[string]bool{} // live data files the rewrite keeps
	for _, t := range tasks {
		if !replaced[t.File.FilePath()] {
			kept[t.File.FilePath()] = true
		}
	}
	var out []iceberg.DataFile
	for _, d := range dels {
		if d.ContentType() != iceberg.EntryContentPosDeletes {
			continue
		}
		targets, err := upsertsink.DeleteTargets(ctx, fs, d.FilePath())
		if err != nil {
			return nil, err
		}
		dead := true
		for path := range targets {
			if kept[path] {
				dead = false
				break
			}
		}
		if dead {
			out = append(out, d)
		}
	}
	return out, nil
}

// upsertRewriteStale reports whether a commit since rw was planned deleted
// rows of a file it replaces: a delete file live in tbl that was not at
// the plan and targets one of them. Committing rw then would bring those
// rows back; it must be planned again.
func upsertRewriteStale(ctx context.Context, tbl *table.Table, rw *Rewrite) (bool, error) {
	if tbl.CurrentSnapshot().SnapshotID == rw.upsert.snapshot {
		return false, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return false, err
	}
	dels, err := upsertsink.LiveDeleteFiles(fs, tbl.CurrentSnapshot())
	if err != nil {
		return false, err
	}
	replaced := map[string]bool{}
	for _, g := range rw.Groups {
		for _, df := range g.OldDataFiles {
			replaced[df.FilePath()] = true
		}
	}
	for _, d := range dels {
		if rw.upsert.deletes[d.FilePath()] {
			continue
		}
		targets, err := upsertsink.DeleteTargets(ctx, fs, d.FilePath())
		if err != nil {
			return false, err
		}
		for path := range targets {
			if replaced[path] {
				return true, nil
			}
		}
	}
	return false, nil
}

// refreshUpsertRewrite returns rw, or, when a commit since its plan deleted
// rows of a file it replaces, a rewrite planned again from tbl (the
// current table). That runs on the commit loop, which is the table's only
// writer: nothing can commit between this plan and its commit. It costs
// the appends the rewrite's time, once in a while; the alternative,
// abandoning, would starve compaction of a table committed every second.
func (s *Sink) refreshUpsertRewrite(ctx context.Context, name string, tbl *table.Table, tasks []table.FileScanTask, rw *Rewrite) (*Rewrite, error) {
	stale, err := upsertRewriteStale(ctx, tbl, rw)
	if err != nil || !stale {
		return rw, err
	}
	s.log.Info("compaction planned again: a commit since its plan deleted rows of the files it rewrites", "table", name)
	fresh := &Rewrite{}
	if err := planUpsertRewrite(ctx, tbl, tasks, rw.upsert.policy, fresh); err != nil {
		return nil, fmt.Errorf("compacting again: %w", err)
	}
	return fresh, nil
}
