package delta

import (
	"fmt"
)

// fileActions renders the commit's removes and adds. Every file's spec
// must partition the Delta table by the same columns as the log's
// metaData: Delta cannot change partition columns without rewriting.
func (l *Log) fileActions(c Commit, partCols []string, at int64) ([]Action, error) {
	dataChange := !c.Rearrange
	var out []Action
	removed := map[string]bool{}
	for _, f := range c.Remove {
		path, pv, err := l.locateOnce(c.Table, f, partCols, removed, "removed")
		if err != nil {
			return nil, err
		}
		if _, live := l.snap.files[path]; c.Rearrange && !live {
			return nil, fmt.Errorf("%w: compaction removes %s, which is not in the table", ErrInvalidCommit, path)
		}
		size := f.SizeBytes
		rm := &Remove{Path: path, DeletionTimestamp: &at, DataChange: dataChange,
			ExtendedFileMetadata: true, PartitionValues: pv, Size: &size}
		if cur, live := l.snap.files[path]; live {
			rm.DeletionVector = cur.DeletionVector // the remove names the logical file
		}
		out = append(out, Action{Remove: rm})
	}
	dvs, rewrites, err := l.deleteActions(c, removed, at)
	if err != nil {
		return nil, err
	}
	out = append(out, rewrites...)
	added := map[string]bool{}
	for _, f := range c.Add {
		path, pv, err := l.locateOnce(c.Table, f, partCols, added, "added")
		if err != nil {
			return nil, err
		}
		skip := map[string]bool{}
		for _, p := range partCols {
			skip[p] = true
		}
		stats, err := statsJSON(c.Table.Schema, skip, f.FileDescriptor)
		if err != nil {
			return nil, err
		}
		mod := f.WrittenAt
		if mod == 0 {
			mod = at
		}
		add := &Add{Path: path, PartitionValues: pv, Size: f.SizeBytes, ModificationTime: mod, DataChange: dataChange, Stats: stats}
		if rows, ok := dvs[path]; ok {
			if err := setDV(add, rows); err != nil {
				return nil, err
			}
		}
		out = append(out, Action{Add: add})
	}
	return out, nil
}

// deleteActions renders the commit's Deletes: the deleted rows of files
// the commit adds (by path) and, for each live file that loses rows, the remove of
// its logical file and the add of the same file with its cumulative DV.
// The DV a file had comes from the log, so it survives restarts.
func (l *Log) deleteActions(c Commit, removed map[string]bool, at int64) (map[string]*RowSet, []Action, error) {
	if len(c.Deletes) > 0 && !c.Table.DeletionVectors {
		return nil, nil, fmt.Errorf("%w: table %s deletes rows but has no deletion vectors", ErrInvalidCommit, c.Table.Name)
	}
	adding := map[string]bool{}
	for _, f := range c.Add {
		if rel, err := relPath(c.Table.Location, f.Path); err == nil {
			adding[rel] = true
		}
	}
	dvs := map[string]*RowSet{}
	var out []Action
	for _, full := range sortedKeys(c.Deletes) {
		path, err := relPath(c.Table.Location, full)
		if err != nil {
			return nil, nil, err
		}
		var rows RowSet
		for _, p := range c.Deletes[full] {
			if p < 0 {
				return nil, nil, fmt.Errorf("%w: row %d of %s", ErrInvalidCommit, p, path)
			}
			rows.Add(p)
		}
		cur, live := l.snap.files[path]
		switch {
		case removed[path]:
			return nil, nil, fmt.Errorf("%w: rows deleted from %s, which the commit removes", ErrInvalidCommit, path)
		case adding[path]:
			dvs[path] = &rows
			continue
		case !live:
			return nil, nil, fmt.Errorf("%w: rows deleted from %s, which is neither added nor in the table", ErrInvalidCommit, path)
		}
		acts, err := rewriteDV(cur, &rows, true, at)
		if err != nil {
			return nil, nil, fmt.Errorf("rows deleted from %s: %w", path, err)
		}
		out = append(out, acts...)
	}
	return dvs, out, nil
}

// rewriteDV replaces a live logical file by the same data file with more
// deleted rows (union: rows join its DV; else rows are its whole DV): the
// remove of its path and DV, the add of its path and the new DV, both
// with dataChange true. Nothing when the DV stays the same. The new DV is
// stored when the version is written (Log.storeDVs); the old one must be
// inline or read already (Log.loadDVs), unless a sync replaces it by a
// set of another cardinality, which needs no reading.
func rewriteDV(cur *Add, rows *RowSet, union bool, at int64) ([]Action, error) {
	switch d := cur.DeletionVector; {
	case d == nil && rows.Cardinality() == 0:
		return nil, nil
	case d != nil && (union || d.Cardinality == int64(rows.Cardinality())):
		had, err := cur.deleted()
		if err != nil {
			return nil, err
		}
		if union {
			rows.Union(had)
		}
		if had.Cardinality() == rows.Cardinality() && (union || sameRows(had, rows)) {
			return nil, nil
		}
	}
	size := cur.Size
	rm := &Remove{Path: cur.Path, DeletionTimestamp: &at, DataChange: true, ExtendedFileMetadata: true,
		PartitionValues: cur.PartitionValues, Size: &size, DeletionVector: cur.DeletionVector}
	add := *cur
	add.DataChange = true
	if err := setDV(&add, rows); err != nil {
		return nil, err
	}
	return []Action{{Remove: rm}, {Add: &add}}, nil
}

// sameRows reports whether two sets hold the same rows.
func sameRows(a, b *RowSet) bool {
	x, err1 := a.MarshalBinary()
	y, err2 := b.MarshalBinary()
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// locateOnce is locate for a file of one list of a commit (its removes or
// its adds), which names each path once: seen holds the paths so far.
func (l *Log) locateOnce(t Table, f File, partCols []string, seen map[string]bool, what string) (string, NullableMap, error) {
	path, pv, err := l.locate(t, f, partCols)
	if err != nil {
		return "", nil, err
	}
	if seen[path] {
		return "", nil, fmt.Errorf("%w: %s %s twice", ErrInvalidCommit, path, what)
	}
	seen[path] = true
	return path, pv, nil
}

// locate returns a file's Delta path and partition values.
func (l *Log) locate(t Table, f File, partCols []string) (string, NullableMap, error) {
	path, err := relPath(t.Location, f.Path)
	if err != nil {
		return "", nil, err
	}
	spec, err := t.spec(int(f.SpecID))
	if err != nil {
		return "", nil, err
	}
	cols := partitionColumns(t.Schema, spec)
	if !sameColumns(cols, partCols) {
		return "", nil, fmt.Errorf("%w: data file %s is of partition spec %d, whose identity columns are not the Delta table's %v",
			ErrUnsupported, f.Path, f.SpecID, partCols)
	}
	pv, err := partitionValues(cols, f.FileDescriptor)
	if err != nil {
		return "", nil, err
	}
	return path, pv, nil
}
