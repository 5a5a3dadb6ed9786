package delta

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// Type widening ("Type Widening" in the protocol): Iceberg promotes a
// column's type in place (int to long, float to double, a decimal's
// precision at the same scale) and keeps the files written before, whose
// Parquet type is the old one. A Delta table follows only with the
// typeWidening table feature, which tells readers to read those files'
// values as the wider type, and with the history of each change in the
// changed field's metadata (delta.typeChanges), which later writers must
// keep. Floe writes the feature only when a table first widens a column.

// FeatureTypeWidening is the table feature a widened column needs
// (reader 3, writer 7).
const FeatureTypeWidening = "typeWidening"

// Keys of the type widening feature: the field metadata holding a field's
// type changes and the table property that allows them.
const (
	typeChangesKey        = "delta.typeChanges"
	enableTypeWideningKey = "delta.enableTypeWidening"
)

// typeChange is one entry of a field's delta.typeChanges. FieldPath is
// set for a change of a list element or map key/value under the field
// ("element", "value", "element.key", ...).
type typeChange struct {
	FromType  string `json:"fromType"`
	ToType    string `json:"toType"`
	FieldPath string `json:"fieldPath,omitempty"`
}

// widening is what evolving the log's schema to the table's found.
type widening struct {
	history bool // some field carries delta.typeChanges: the table needs typeWidening
	changed bool // this schema adds type changes: the table property must allow them
}

// evolve makes info's schema the successor of the log's current schema
// string: every field that was already in it keeps its delta.typeChanges,
// and a field whose type Iceberg widened records the change. Any other
// type change is refused with ErrUnsupported naming the column and both
// types. The feature list gains typeWidening when a field carries type
// changes.
func (info *schemaInfo) evolve(oldSchema string) (widening, error) {
	var old map[string]any
	if err := json.Unmarshal([]byte(oldSchema), &old); err != nil {
		return widening{}, fmt.Errorf("%w: schemaString: %v", ErrCorruptLog, err)
	}
	w := widening{}
	if err := w.fields(info.root, old, ""); err != nil {
		return widening{}, err
	}
	if !w.history {
		return w, nil
	}
	if err := info.encode(); err != nil {
		return widening{}, err
	}
	info.features = append(info.features, FeatureTypeWidening)
	return w, nil
}

// encode renders info.root again as the schema string.
func (info *schemaInfo) encode() error {
	b, err := json.Marshal(info.root)
	if err != nil {
		return fmt.Errorf("encoding the delta schema: %w", err)
	}
	info.schemaString = string(b)
	return nil
}

// fields matches the new struct's fields with the old struct's by name (a
// column without column mapping is found by its name). The new fields'
// metadata maps are shared with info.root, so the history lands there.
func (w *widening) fields(n deltaStruct, old map[string]any, path string) error {
	byName := map[string]map[string]any{}
	of, _ := old["fields"].([]any)
	for _, f := range of {
		if fm, ok := f.(map[string]any); ok {
			byName[fmt.Sprint(fm["name"])] = fm
		}
	}
	for _, f := range n.Fields {
		o, ok := byName[f.Name]
		if !ok {
			continue // a new column
		}
		history, err := typeChanges(o, path+f.Name)
		if err != nil {
			return err
		}
		changes, err := w.compare(f.Type, o["type"], path+f.Name, "")
		if err != nil {
			return err
		}
		if len(changes) > 0 {
			w.changed = true
		}
		if history = append(history, changes...); len(history) > 0 {
			f.Metadata[typeChangesKey] = history
			w.history = true
		}
	}
	return nil
}

// typeChanges decodes the history an old field carries.
func typeChanges(field map[string]any, col string) ([]typeChange, error) {
	md, _ := field["metadata"].(map[string]any)
	raw, ok := md[typeChangesKey]
	if !ok {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s of column %s: %v", ErrCorruptLog, typeChangesKey, col, err)
	}
	var out []typeChange
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%w: %s of column %s: %v", ErrCorruptLog, typeChangesKey, col, err)
	}
	return out, nil
}

// compare compares a new type with the old one of the same field; col is
// the column's path for errors and fieldPath the path from the nearest
// struct field, which holds the returned changes.
func (w *widening) compare(n, o any, col, fieldPath string) ([]typeChange, error) {
	om, _ := o.(map[string]any)
	switch nt := n.(type) {
	case deltaStruct:
		if om == nil || om["type"] != "struct" {
			return nil, refuse(col, o, n)
		}
		return nil, w.fields(nt, om, col+".")
	case deltaArray:
		if om == nil || om["type"] != "array" {
			return nil, refuse(col, o, n)
		}
		return w.compare(nt.ElementType, om["elementType"], col+".element", join(fieldPath, "element"))
	case deltaMap:
		if om == nil || om["type"] != "map" {
			return nil, refuse(col, o, n)
		}
		keys, err := w.compare(nt.KeyType, om["keyType"], col+".key", join(fieldPath, "key"))
		if err != nil {
			return nil, err
		}
		values, err := w.compare(nt.ValueType, om["valueType"], col+".value", join(fieldPath, "value"))
		return append(keys, values...), err
	case string:
		ot, ok := o.(string)
		if !ok {
			return nil, refuse(col, o, n)
		}
		if normalType(ot) == nt {
			return nil, nil
		}
		if !widens(normalType(ot), nt) {
			return nil, refuse(col, o, n)
		}
		return []typeChange{{FromType: normalType(ot), ToType: nt, FieldPath: fieldPath}}, nil
	}
	return nil, fmt.Errorf("delta schema of column %s: unexpected %T", col, n)
}

func join(path, step string) string {
	if path == "" {
		return step
	}
	return path + "." + step
}

// refuse is the error of a type change Delta cannot follow.
func refuse(col string, o, n any) error {
	return fmt.Errorf("%w: column %s changes type from %s to %s, which Delta cannot widen (docs/formats.md)",
		ErrUnsupported, col, typeName(o), typeName(n))
}

// typeName names a type of either side for errors: a primitive's name or
// the nested kind.
func typeName(t any) string {
	switch t := t.(type) {
	case string:
		return t
	case map[string]any:
		return fmt.Sprint(t["type"])
	case deltaStruct:
		return t.Type
	case deltaArray:
		return t.Type
	case deltaMap:
		return t.Type
	}
	return fmt.Sprintf("%v", t)
}

// normalType writes a primitive of another writer's log as Floe writes
// it ("decimal(10, 2)" is "decimal(10,2)").
func normalType(t string) string { return strings.ReplaceAll(t, " ", "") }

// widens reports whether Iceberg promotes from to to (and so Floe may
// widen it): int to long, float to double, a decimal's precision at the
// same scale. These are a subset of the protocol's widenings; the others
// (byte and short, date to timestamp_ntz, a larger scale, integers to
// decimals or doubles) cannot come from an Iceberg schema.
func widens(from, to string) bool {
	switch {
	case from == "integer" && to == "long", from == "float" && to == "double":
		return true
	}
	var p1, s1, p2, s2 int
	if _, err := fmt.Sscanf(from, "decimal(%d,%d)", &p1, &s1); err != nil {
		return false
	}
	if _, err := fmt.Sscanf(to, "decimal(%d,%d)", &p2, &s2); err != nil {
		return false
	}
	return s1 == s2 && p2 > p1
}

// promotedLiteral decodes an Iceberg single-value serialization of typ,
// also from a file written before the column was promoted: its bounds and
// partition values keep the old type's form (4 bytes for an int promoted
// to long, a float promoted to double). Decimals need nothing: their form
// is the unscaled value, the same at any precision.
func promotedLiteral(typ iceberg.Type, b []byte) (iceberg.Literal, error) {
	if len(b) == 4 {
		switch typ.(type) {
		case iceberg.Int64Type:
			lit, err := iceberg.LiteralFromBytes(iceberg.PrimitiveTypes.Int32, b)
			if err != nil {
				return nil, err
			}
			return iceberg.NewLiteral(int64(lit.(iceberg.Int32Literal))), nil
		case iceberg.Float64Type:
			lit, err := iceberg.LiteralFromBytes(iceberg.PrimitiveTypes.Float32, b)
			if err != nil {
				return nil, err
			}
			return iceberg.NewLiteral(float64(lit.(iceberg.Float32Literal))), nil
		}
	}
	return iceberg.LiteralFromBytes(typ, b)
}
