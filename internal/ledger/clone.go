package ledger

import (
	"maps"
	"slices"
)

// Clone returns a deep copy of the ledger that shares no map, slice or
// pointer with l, so that l can keep changing while the copy is encoded
// (the FSM snapshots a clone outside its lock).
func (l *Ledger) Clone() *Ledger {
	if l == nil {
		return nil
	}
	out := &Ledger{Assignments: maps.Clone(l.Assignments)}
	if l.Offsets != nil {
		out.Offsets = make(map[string]map[string]*Offsets, len(l.Offsets))
	}
	if l.Pending != nil {
		out.Pending = make(map[string][]Entry, len(l.Pending))
	}
	for table, offs := range l.Offsets {
		c := make(map[string]*Offsets, len(offs))
		slab := make([]Offsets, 0, len(offs)) // one allocation per table
		for tp, o := range offs {
			if o == nil { // never written so, but a copy must not panic
				c[tp] = nil
				continue
			}
			slab = append(slab, *o)
			c[tp] = &slab[len(slab)-1]
		}
		out.Offsets[table] = c
	}
	for table, entries := range l.Pending {
		c := make([]Entry, len(entries))
		for i, e := range entries {
			c[i] = e.Clone()
		}
		out.Pending[table] = c
	}
	return out
}

// Clone returns a deep copy of the entry.
func (e Entry) Clone() Entry {
	e.Files = cloneFiles(e.Files)
	e.DLQFiles = cloneFiles(e.DLQFiles)
	e.Ranges = slices.Clone(e.Ranges)
	if e.Tombstones != nil {
		t := make(map[string][]int64, len(e.Tombstones))
		for k, v := range e.Tombstones {
			t[k] = slices.Clone(v)
		}
		e.Tombstones = t
	}
	return e
}

func cloneFiles(files []FileDescriptor) []FileDescriptor {
	if files == nil {
		return nil
	}
	out := make([]FileDescriptor, len(files))
	for i, f := range files {
		out[i] = f.Clone()
	}
	return out
}

// Clone returns a deep copy of the descriptor.
func (d FileDescriptor) Clone() FileDescriptor {
	if d.Partition != nil {
		p := make(map[int]any, len(d.Partition))
		for k, v := range d.Partition {
			p[k] = cloneValue(v)
		}
		d.Partition = p
	}
	d.PartValues = cloneBytesMap(d.PartValues)
	d.ColumnSizes = maps.Clone(d.ColumnSizes)
	d.ValueCounts = maps.Clone(d.ValueCounts)
	d.NullCounts = maps.Clone(d.NullCounts)
	d.NaNCounts = maps.Clone(d.NaNCounts)
	d.LowerBounds = cloneBytesMap(d.LowerBounds)
	d.UpperBounds = cloneBytesMap(d.UpperBounds)
	d.SplitOffsets = slices.Clone(d.SplitOffsets)
	if d.SortOrderID != nil {
		id := *d.SortOrderID
		d.SortOrderID = &id
	}
	return d
}

func cloneBytesMap(m map[int][]byte) map[int][]byte {
	if m == nil {
		return nil
	}
	n := 0
	for _, v := range m {
		n += len(v)
	}
	// One buffer for all values; each gets a full slice expression, so an
	// append to one cannot run into the next.
	buf := make([]byte, 0, n)
	out := make(map[int][]byte, len(m))
	for k, v := range m {
		if v == nil {
			out[k] = nil
			continue
		}
		start := len(buf)
		buf = append(buf, v...)
		out[k] = buf[start:len(buf):len(buf)]
	}
	return out
}

// cloneValue deep-copies a JSON-shaped partition value: what JSON decoding
// gives (maps, slices, scalars) or a written file's value ([]byte; other Go
// values are immutable scalars or arrays).
func cloneValue(v any) any {
	switch x := v.(type) {
	case []byte:
		return slices.Clone(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}
