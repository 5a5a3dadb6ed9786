package delta

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// The Delta schema (schemaString) of an Iceberg schema, by the mapping in
// docs/formats.md. Names are kept: without column mapping a Delta reader
// finds a column in a Parquet file by its name, which is the Iceberg name
// iceberg-go wrote.

// FeatureTimestampNtz is the table feature a timestamp without time zone
// needs (reader 3, writer 7).
const FeatureTimestampNtz = "timestampNtz"

// deltaField is a struct field of the Delta schema serialization.
type deltaField struct {
	Name     string         `json:"name"`
	Type     any            `json:"type"` // a primitive's name or a nested type
	Nullable bool           `json:"nullable"`
	Metadata map[string]any `json:"metadata"`
}

type deltaStruct struct {
	Type   string       `json:"type"` // "struct"
	Fields []deltaField `json:"fields"`
}

type deltaArray struct {
	Type         string `json:"type"` // "array"
	ElementType  any    `json:"elementType"`
	ContainsNull bool   `json:"containsNull"`
}

type deltaMap struct {
	Type              string `json:"type"` // "map"
	KeyType           any    `json:"keyType"`
	ValueType         any    `json:"valueType"`
	ValueContainsNull bool   `json:"valueContainsNull"`
}

// schemaInfo is what the mapping found besides the schema string.
type schemaInfo struct {
	schemaString string
	features     []string    // table features the types need
	root         deltaStruct // the schema schemaString encodes
}

// mapSchema renders an Iceberg schema as a Delta schemaString.
func mapSchema(sc *iceberg.Schema) (schemaInfo, error) {
	m := mapper{}
	st, err := m.structOf(sc.Fields(), "")
	if err != nil {
		return schemaInfo{}, err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return schemaInfo{}, fmt.Errorf("encoding the delta schema: %w", err)
	}
	info := schemaInfo{schemaString: string(b), root: st}
	if m.ntz {
		info.features = []string{FeatureTimestampNtz}
	}
	return info, nil
}

type mapper struct{ ntz bool }

// structOf maps the fields of one struct. Delta wants names unique
// regardless of case within a struct; Iceberg does not.
func (m *mapper) structOf(fields []iceberg.NestedField, path string) (deltaStruct, error) {
	out := deltaStruct{Type: "struct", Fields: make([]deltaField, 0, len(fields))}
	seen := map[string]string{}
	for _, f := range fields {
		name := path + f.Name
		if other, ok := seen[strings.ToLower(f.Name)]; ok {
			return deltaStruct{}, fmt.Errorf("%w: columns %q and %q differ only in case", ErrUnsupported, other, name)
		}
		seen[strings.ToLower(f.Name)] = name
		if omitted(f.Type) {
			continue
		}
		t, err := m.typeOf(f.Type, name)
		if err != nil {
			return deltaStruct{}, err
		}
		out.Fields = append(out.Fields, deltaField{Name: f.Name, Type: t, Nullable: !f.Required, Metadata: map[string]any{}})
	}
	return out, nil
}

// typeOf maps one type; name is the column's path for errors.
func (m *mapper) typeOf(t iceberg.Type, name string) (any, error) {
	switch t := t.(type) {
	case *iceberg.StructType:
		return m.structOf(t.FieldList, name+".")
	case *iceberg.ListType:
		el, err := m.typeOf(t.Element, name+".element")
		if err != nil {
			return nil, err
		}
		return deltaArray{Type: "array", ElementType: el, ContainsNull: !t.ElementRequired}, nil
	case *iceberg.MapType:
		k, err := m.typeOf(t.KeyType, name+".key")
		if err != nil {
			return nil, err
		}
		v, err := m.typeOf(t.ValueType, name+".value")
		if err != nil {
			return nil, err
		}
		return deltaMap{Type: "map", KeyType: k, ValueType: v, ValueContainsNull: !t.ValueRequired}, nil
	case iceberg.DecimalType:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision(), t.Scale()), nil
	case iceberg.TimestampType:
		m.ntz = true
		return "timestamp_ntz", nil
	case iceberg.FixedType:
		return "binary", nil
	}
	if p, ok := primitives[t.Type()]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("%w: column %s of type %s (docs/formats.md)", ErrUnsupported, name, t)
}

// omitted reports whether a column of type t is left out of the Delta
// schema: time, and a list or map that holds one. Delta has no time of
// day type, and the Parquet column is INT64 annotated TIME(MICROS), which
// Spark and Trino refuse to read as a long; a reader reads only the
// columns its schema names, so the rest of the table reads, and the
// column stays readable through Iceberg (docs/formats.md). Refusing the
// column instead stopped the table's whole Delta log.
func omitted(t iceberg.Type) bool {
	switch t := t.(type) {
	case iceberg.TimeType:
		return true
	case *iceberg.ListType:
		return omitted(t.Element)
	case *iceberg.MapType:
		return omitted(t.KeyType) || omitted(t.ValueType)
	}
	return false
}

// primitives maps the Iceberg primitives with a Delta type of the same
// Parquet representation. uuid and fixed(n) become binary: Delta has
// neither, and the bytes read back unchanged. time is left out of the
// schema (omitted); timestamp_ns and timestamptz_ns have no Delta type
// (Delta times are microsecond timestamps) and are refused.
var primitives = map[string]string{
	"boolean":     "boolean",
	"int":         "integer",
	"long":        "long",
	"float":       "float",
	"double":      "double",
	"date":        "date",
	"timestamptz": "timestamp",
	"string":      "string",
	"binary":      "binary",
	"uuid":        "binary",
}
