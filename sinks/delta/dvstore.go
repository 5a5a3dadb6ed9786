package delta

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// A commit's DVs go through three steps: loadDVs reads the DVs of the
// live files it deletes rows from (before its actions are built, which do
// no I/O), setDV gives an add its new rows, and storeDVs, just before the
// version is published, writes those rows into the commit's DV file and
// fills in the descriptors.

// setDV makes rows the DV of a (none when rows is empty); its descriptor
// has only its size and cardinality until storeDVs stores it.
func setDV(a *Add, rows *RowSet) error {
	a.DeletionVector, a.dvRows, a.dvData = nil, nil, nil
	if rows.Cardinality() == 0 {
		return nil
	}
	b, err := rows.MarshalBinary()
	if err != nil {
		return fmt.Errorf("deletion vector of %s: %w", a.Path, err)
	}
	if len(b) > 1<<31-1 {
		return fmt.Errorf("deletion vector of %s: %d bytes", a.Path, len(b))
	}
	a.DeletionVector = &DeletionVector{SizeInBytes: int32(len(b)), Cardinality: int64(rows.Cardinality())}
	a.dvRows, a.dvData = rows, b
	return nil
}

// deleted is the rows of a's DV: known, inline, or empty by its
// descriptor; a DV file loadDVs did not read is an error (a bug: the
// commit would lose the rows it holds).
func (a *Add) deleted() (*RowSet, error) {
	d := a.DeletionVector
	switch {
	case a.dvRows != nil:
		return a.dvRows, nil
	case d.StorageType == "i":
		r, err := ReadInlineDV(d)
		if err != nil {
			return nil, fmt.Errorf("deletion vector of %s: %w", a.Path, err)
		}
		a.dvRows = r
		return r, nil
	case d.Cardinality == 0:
		return &RowSet{}, nil
	}
	return nil, fmt.Errorf("deletion vector of %s (storageType %q) was not read before the commit", a.Path, d.StorageType)
}

// loadDVs reads the DVs of the live files c deletes rows from (a sync's
// Deletes name every live file that has deleted rows), which the commit
// unions with or compares to its rows; each DV file is read once, and a
// DV this process wrote or read before is not read again.
func (l *Log) loadDVs(ctx context.Context, c Commit) error {
	files := map[string][]byte{}
	for _, full := range sortedKeys(c.Deletes) {
		rel, err := relPath(c.Table.Location, full)
		if err != nil {
			continue // refused with the commit's actions
		}
		cur, ok := l.snap.files[rel]
		if !ok || cur.DeletionVector == nil || cur.dvRows != nil || cur.DeletionVector.StorageType == "i" {
			continue
		}
		rows, err := readDV(ctx, l.st, cur.DeletionVector, files)
		if err != nil {
			return fmt.Errorf("deletion vector of %s: %w", rel, err)
		}
		cur.dvRows = rows
	}
	return nil
}

// storeDVs stores the new DVs of a version's adds: into one DV file ('u',
// put durably before the version that references it is published) or,
// with Options.InlineDVs, inline ('i'). The descriptors are filled in
// only once the file is written.
func (l *Log) storeDVs(ctx context.Context, actions []Action) error {
	var adds []*Add
	var bitmaps [][]byte
	for _, a := range actions {
		if a.Add != nil && a.Add.dvData != nil {
			adds, bitmaps = append(adds, a.Add), append(bitmaps, a.Add.dvData)
		}
	}
	if len(adds) == 0 {
		return nil
	}
	if l.opts.InlineDVs {
		for _, a := range adds {
			a.DeletionVector.StorageType, a.DeletionVector.PathOrInlineDv = "i", z85Encode(a.dvData)
			a.dvData = nil
		}
		return nil
	}
	data, offsets, err := encodeDVFile(bitmaps)
	if err != nil {
		return err
	}
	id := uuid.New()
	name := dvFileName(id)
	if err := l.st.Put(ctx, name, data); err != nil {
		return fmt.Errorf("writing deletion vector file %s: %w", name, err)
	}
	enc := z85Encode(id[:])
	for i, a := range adds {
		off := offsets[i]
		a.DeletionVector.StorageType, a.DeletionVector.PathOrInlineDv, a.DeletionVector.Offset = "u", enc, &off
		a.dvData = nil
	}
	return nil
}
