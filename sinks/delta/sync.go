package delta

import (
	"context"
	"fmt"
)

// Sync makes the log's live files those of the table (live: every data
// file the Iceberg table's current snapshot holds). A table without a log
// gets version 0 listing them (the Delta log added to an existing table,
// its data never rewritten); a log that missed changes of the table (its
// Delta format turned off and on again, a replace delete, a compaction
// whose Delta version was not written before a crash) gets a version that
// removes what left the table and adds what entered it. When they agree
// nothing is written (Result.Published false). c names the table, commit
// id, offsets and time; its Sequence, Add and Remove are ignored; its
// Deletes are the rows deleted from the live files (all of them, not
// since the log's version): each live file's DV is made exactly those
// rows.
//
// c.Rearrange says the caller knows the table changed only by rewrites
// that keep its rows (compactions the log missed): the version is then an
// OPTIMIZE whose removes and adds carry dataChange false, so a streaming
// reader of the log does not read those rows again. The log checks what
// it can: no kept file's DV changes and the live row count is the same
// before and after; otherwise the version changes data, as without it.
func (l *Log) Sync(ctx context.Context, c Commit, live []File) (Result, error) {
	if err := l.prepare(ctx, &c); err != nil {
		return Result{}, err
	}
	deletes, rearrange := c.Deletes, c.Rearrange
	c.Sequence, c.Add, c.Remove, c.Rearrange, c.Deletes = 0, nil, nil, false, map[string][]int64{}
	at := c.At.UnixMilli()
	keep := map[string]bool{}
	var rewrites []Action
	for _, f := range live {
		rel, err := relPath(c.Table.Location, f.Path)
		if err != nil {
			return Result{}, fmt.Errorf("syncing the delta log of %s: %w", c.Table.Name, err)
		}
		keep[rel] = true
		cur, ok := l.snap.files[rel]
		if !ok {
			c.Add = append(c.Add, f)
			if rows, ok := deletes[f.Path]; ok {
				c.Deletes[f.Path] = rows
			}
			continue
		}
		var rows RowSet
		for _, p := range deletes[f.Path] {
			rows.Add(p)
		}
		acts, err := rewriteDV(cur, &rows, false, at)
		if err != nil {
			return Result{}, fmt.Errorf("syncing the delta log of %s: rows deleted from %s: %w", c.Table.Name, rel, err)
		}
		rewrites = append(rewrites, acts...)
	}
	var gone []string
	for _, p := range sortedKeys(l.snap.files) {
		if !keep[p] {
			gone = append(gone, p)
		}
	}
	if len(c.Add) == 0 && len(gone) == 0 && len(rewrites) == 0 && l.snap.version >= 0 {
		return Result{Version: l.snap.version}, nil
	}
	c.Rearrange = rearrange && l.snap.version >= 0 && len(rewrites) == 0 && l.sameRowCount(live, deletes)
	v := l.snap.version + 1
	actions, err := l.actions(c, v)
	if err != nil {
		return Result{}, fmt.Errorf("delta version %d of %s: %w", v, c.Table.Name, err)
	}
	for _, p := range gone {
		add := l.snap.files[p]
		size := add.Size
		actions = append(actions, Action{Remove: &Remove{Path: p, DeletionTimestamp: &at, DataChange: !c.Rearrange,
			ExtendedFileMetadata: true, PartitionValues: add.PartitionValues, Size: &size, DeletionVector: add.DeletionVector}})
	}
	return l.write(ctx, c, v, append(actions, rewrites...))
}

// sameRowCount reports whether the table's live files hold as many rows as
// the log's: a rearrangement's necessary condition.
func (l *Log) sameRowCount(live []File, deletes map[string][]int64) bool {
	adds := make([]*Add, 0, len(l.snap.files))
	for _, a := range l.snap.files {
		adds = append(adds, a)
	}
	before, ok := liveRows(adds)
	if !ok {
		return false
	}
	var after int64
	for _, f := range live {
		after += f.RecordCount - int64(len(deletes[f.Path]))
	}
	return before == after
}
