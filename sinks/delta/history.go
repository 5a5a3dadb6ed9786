package delta

import (
	"cmp"
	"slices"

	"github.com/apache/iceberg-go"
)

// The type changes a log's first version records. A log started for a
// table Iceberg already widened (delta turned on later, or a log an
// operator deleted and the committer rebuilt) lists files written under
// the older schemas, whose Parquet types are the narrower ones: the
// protocol allows that only with the typeWidening feature and the changes
// in delta.typeChanges. Iceberg keeps every schema, and a field keeps its
// id for life, so each field's history is the sequence of its types in
// schema order.

// historyFrom records in info the type changes of every field of the
// current schema sc over the table's schemas, adding the typeWidening
// feature when there is any. A change Delta cannot widen (Iceberg allows
// none) is refused like one of a later schema.
func (info *schemaInfo) historyFrom(sc *iceberg.Schema, schemas []*iceberg.Schema) (bool, error) {
	hist, err := fieldHistory(schemas)
	if err != nil || len(hist) == 0 {
		return false, err
	}
	if !attachHistory(sc.Fields(), info.root, hist) {
		return false, nil
	}
	if err := info.encode(); err != nil {
		return false, err
	}
	info.features = append(info.features, FeatureTypeWidening)
	return true, nil
}

// fieldHistory lists, by field id (list elements and map keys and values
// included), the changes of each primitive's Delta type over the schemas
// in id order.
func fieldHistory(schemas []*iceberg.Schema) (map[int][]typeChange, error) {
	schemas = slices.SortedFunc(slices.Values(schemas), func(a, b *iceberg.Schema) int { return cmp.Compare(a.ID, b.ID) })
	last := map[int]string{}
	hist := map[int][]typeChange{}
	var walk func(id int, t iceberg.Type, name string) error
	walk = func(id int, t iceberg.Type, name string) error {
		switch t := t.(type) {
		case *iceberg.StructType:
			for _, f := range t.FieldList {
				if err := walk(f.ID, f.Type, name+"."+f.Name); err != nil {
					return err
				}
			}
			return nil
		case *iceberg.ListType:
			return walk(t.ElementID, t.Element, name+".element")
		case *iceberg.MapType:
			if err := walk(t.KeyID, t.KeyType, name+".key"); err != nil {
				return err
			}
			return walk(t.ValueID, t.ValueType, name+".value")
		}
		m := mapper{}
		dt, err := m.typeOf(t, name)
		if err != nil {
			return nil // a type Delta lacks, in a schema the table left behind
		}
		to, _ := dt.(string)
		if from, ok := last[id]; ok && from != to {
			if !widens(from, to) {
				return refuse(name[1:], from, to)
			}
			hist[id] = append(hist[id], typeChange{FromType: from, ToType: to})
		}
		last[id] = to
		return nil
	}
	for _, sc := range schemas {
		for _, f := range sc.Fields() {
			if err := walk(f.ID, f.Type, "."+f.Name); err != nil {
				return nil, err
			}
		}
	}
	return hist, nil
}

// attachHistory puts each field's changes on its nearest struct field of
// the Delta schema st (built from fields in order), with fieldPath inside
// lists and maps; it reports whether any field got a history.
func attachHistory(fields []iceberg.NestedField, st deltaStruct, hist map[int][]typeChange) bool {
	found := false
	for i, f := range fields {
		changes, nested := collectHistory(f.ID, f.Type, st.Fields[i].Type, "", hist)
		if len(changes) > 0 {
			st.Fields[i].Metadata[typeChangesKey] = changes
		}
		found = found || nested || len(changes) > 0
	}
	return found
}

// collectHistory returns the changes of a field's type to be held by the
// field itself, and whether a nested struct field got its own.
func collectHistory(id int, t iceberg.Type, dt any, path string, hist map[int][]typeChange) ([]typeChange, bool) {
	switch t := t.(type) {
	case *iceberg.StructType:
		return nil, attachHistory(t.FieldList, dt.(deltaStruct), hist)
	case *iceberg.ListType:
		return collectHistory(t.ElementID, t.Element, dt.(deltaArray).ElementType, join(path, "element"), hist)
	case *iceberg.MapType:
		dm := dt.(deltaMap)
		keys, nk := collectHistory(t.KeyID, t.KeyType, dm.KeyType, join(path, "key"), hist)
		values, nv := collectHistory(t.ValueID, t.ValueType, dm.ValueType, join(path, "value"), hist)
		return append(keys, values...), nk || nv
	}
	var out []typeChange
	for _, c := range hist[id] {
		c.FieldPath = path
		out = append(out, c)
	}
	return out, false
}
