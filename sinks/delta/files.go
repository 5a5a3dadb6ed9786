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
		out = append(out, Action{Remove: &Remove{Path: path, DeletionTimestamp: &at, DataChange: dataChange,
			ExtendedFileMetadata: true, PartitionValues: pv, Size: &size}})
	}
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
		out = append(out, Action{Add: &Add{Path: path, PartitionValues: pv, Size: f.SizeBytes,
			ModificationTime: mod, DataChange: dataChange, Stats: stats}})
	}
	return out, nil
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
