package iceberg

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
)

// Metadata column names (sinks/sink's, the same in every format). They
// are documented in docs/tables.md.
const (
	ColTopic     = sink.ColTopic
	ColPartition = sink.ColPartition
	ColOffset    = sink.ColOffset
	ColTimestamp = sink.ColTimestamp
	ColKey       = sink.ColKey
	ColHeaders   = sink.ColHeaders
	ColValue     = "value" // raw and dead-letter tables
	ColError     = "error" // dead-letter tables
	// ColKeyDecoded is the key decoded with its own registry schema; it is
	// a payload field of the shape (so it evolves like one) that the worker
	// fills only when keys carry a schema id.
	ColKeyDecoded = records.KeyDecodedColumn
)

// schemaFormat reports whether a table's columns come from a registry
// schema (avro, protobuf, json_schema, latest) rather than JSON inference.
func schemaFormat(format string) bool {
	switch format {
	case "avro", "protobuf", "json_schema", "latest":
		return true
	}
	return false
}

// idGen hands out field ids for a schema under construction. The catalog
// reassigns them when it creates the table, so only uniqueness matters.
type idGen struct{ n int }

func (g *idGen) next() int { g.n++; return g.n }

func metadataFields(g *idGen) []iceberg.NestedField {
	return []iceberg.NestedField{
		{ID: g.next(), Name: ColTopic, Type: iceberg.PrimitiveTypes.String, Doc: "Kafka topic"},
		{ID: g.next(), Name: ColPartition, Type: iceberg.PrimitiveTypes.Int32, Doc: "Kafka partition"},
		{ID: g.next(), Name: ColOffset, Type: iceberg.PrimitiveTypes.Int64, Doc: "Kafka offset"},
		{ID: g.next(), Name: ColTimestamp, Type: iceberg.PrimitiveTypes.TimestampTz, Doc: "Kafka record timestamp"},
		{ID: g.next(), Name: ColKey, Type: iceberg.PrimitiveTypes.Binary, Doc: "Kafka record key"},
		{ID: g.next(), Name: ColHeaders, Doc: "Kafka record headers, in order", Type: &iceberg.ListType{
			ElementID: g.next(),
			Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
				{ID: g.next(), Name: "key", Type: iceberg.PrimitiveTypes.String},
				{ID: g.next(), Name: "value", Type: iceberg.PrimitiveTypes.Binary},
			}},
		}},
	}
}

// tableSchema is the schema of a new table of the given format.
func tableSchema(format string, shape *records.Shape) (*iceberg.Schema, error) {
	g := &idGen{}
	fields := metadataFields(g)
	switch format {
	case "raw":
		fields = append(fields, iceberg.NestedField{ID: g.next(), Name: ColValue, Type: iceberg.PrimitiveTypes.Binary, Doc: "Kafka record value"})
	case "json", "avro", "protobuf", "json_schema", "latest":
		if shape != nil {
			for _, f := range shape.Fields {
				fields = append(fields, iceberg.NestedField{ID: g.next(), Name: f.Name, Type: shapeType(f.Shape, g)})
			}
		}
	default:
		return nil, fmt.Errorf("unknown table format %q", format)
	}
	return iceberg.NewSchema(0, fields...), nil
}

// dlqSchema is the schema of a dead-letter table.
func dlqSchema() *iceberg.Schema {
	g := &idGen{}
	fields := append(metadataFields(g),
		iceberg.NestedField{ID: g.next(), Name: ColValue, Type: iceberg.PrimitiveTypes.Binary, Doc: "undecodable Kafka record value"},
		iceberg.NestedField{ID: g.next(), Name: ColError, Type: iceberg.PrimitiveTypes.String, Doc: "why the record could not be decoded"},
	)
	return iceberg.NewSchema(0, fields...)
}

// primitiveTypes pairs each primitive shape kind with its Iceberg type, one
// to one: shapeType writes a column by it and exactShape reads one back.
var primitiveTypes = []struct {
	kind records.Kind
	typ  iceberg.Type
}{
	{records.Bool, iceberg.PrimitiveTypes.Bool},
	{records.Int, iceberg.PrimitiveTypes.Int32},
	{records.Long, iceberg.PrimitiveTypes.Int64},
	{records.Float, iceberg.PrimitiveTypes.Float32},
	{records.Double, iceberg.PrimitiveTypes.Float64},
	{records.String, iceberg.PrimitiveTypes.String},
	{records.Bytes, iceberg.PrimitiveTypes.Binary},
	{records.Date, iceberg.PrimitiveTypes.Date},
	{records.Time, iceberg.PrimitiveTypes.Time},
	{records.Timestamp, iceberg.PrimitiveTypes.Timestamp},
	{records.TimestampTz, iceberg.PrimitiveTypes.TimestampTz},
	{records.UUID, iceberg.PrimitiveTypes.UUID},
}

func shapeType(s *records.Shape, g *idGen) iceberg.Type {
	for _, p := range primitiveTypes {
		if p.kind == s.Kind {
			return p.typ
		}
	}
	switch s.Kind {
	case records.Fixed:
		return iceberg.FixedTypeOf(s.Size)
	case records.Decimal:
		return iceberg.DecimalTypeOf(s.Precision, s.Scale)
	case records.Date:
		return iceberg.PrimitiveTypes.Date
	case records.Time:
		return iceberg.PrimitiveTypes.Time
	case records.Timestamp:
		return iceberg.PrimitiveTypes.Timestamp
	case records.TimestampTz:
		return iceberg.PrimitiveTypes.TimestampTz
	case records.UUID:
		return iceberg.PrimitiveTypes.UUID
	case records.Map:
		kid, vid := g.next(), g.next()
		return &iceberg.MapType{KeyID: kid, KeyType: shapeType(s.Key, g), ValueID: vid, ValueType: shapeType(s.Elem, g)}
	case records.List:
		id := g.next()
		return &iceberg.ListType{ElementID: id, Element: shapeType(s.Elem, g)}
	case records.Struct:
		st := &iceberg.StructType{}
		for _, f := range s.Fields {
			st.FieldList = append(st.FieldList, iceberg.NestedField{ID: g.next(), Name: f.Name, Type: shapeType(f.Shape, g)})
		}
		return st
	}
	panic(fmt.Sprintf("unhandled shape kind %v", s.Kind))
}

// shapeOf converts a table's payload columns back into a shape whose fields
// are all committed. For json tables, columns of types JSON inference never
// produces (changed by hand) are refused with the column named; schema
// formats map every Iceberg type to its exact shape.
func shapeOf(sc *iceberg.Schema, format string) (*records.Shape, error) {
	out := &records.Shape{Kind: records.Struct}
	exact := schemaFormat(format)
	for _, f := range sc.Fields() {
		if strings.HasPrefix(f.Name, "_kafka_") && f.Name != ColKeyDecoded {
			continue
		}
		var s *records.Shape
		var err error
		if exact {
			s, err = exactShape(f.Type, f.Name)
		} else {
			s, err = typeShape(f.Type, f.Name)
		}
		if err != nil {
			return nil, err
		}
		out.Fields = append(out.Fields, &records.Field{Name: f.Name, Shape: s, Committed: true})
	}
	out.MarkCommitted()
	return out, nil
}

func typeShape(t iceberg.Type, path string) (*records.Shape, error) {
	switch t.(type) {
	case iceberg.BooleanType:
		return &records.Shape{Kind: records.Bool}, nil
	case iceberg.Int32Type, iceberg.Int64Type:
		return &records.Shape{Kind: records.Long}, nil
	case iceberg.Float32Type, iceberg.Float64Type:
		return &records.Shape{Kind: records.Double}, nil
	case iceberg.StringType:
		return &records.Shape{Kind: records.String}, nil
	}
	if s, ok, err := childShapes(t, path, typeShape); ok {
		return s, err
	}
	return nil, fmt.Errorf("column %s has type %s, which a json table cannot fill", path, t)
}

// childShapes converts a list or a struct, each element or field through
// conv; ok is false for any other type.
func childShapes(t iceberg.Type, path string, conv func(iceberg.Type, string) (*records.Shape, error)) (_ *records.Shape, ok bool, _ error) {
	switch t := t.(type) {
	case *iceberg.ListType:
		e, err := conv(t.Element, path+"[]")
		if err != nil {
			return nil, true, err
		}
		return &records.Shape{Kind: records.List, Elem: e}, true, nil
	case *iceberg.StructType:
		s := &records.Shape{Kind: records.Struct}
		for _, f := range t.FieldList {
			fs, err := conv(f.Type, path+"."+f.Name)
			if err != nil {
				return nil, true, err
			}
			s.Fields = append(s.Fields, &records.Field{Name: f.Name, Shape: fs})
		}
		return s, true, nil
	}
	return nil, false, nil
}

// exactShape converts an Iceberg type into the shape that produces it, for
// tables whose columns follow a registry schema.
func exactShape(t iceberg.Type, path string) (*records.Shape, error) {
	for _, p := range primitiveTypes {
		if t.Equals(p.typ) {
			return &records.Shape{Kind: p.kind}, nil
		}
	}
	switch t := t.(type) {
	case iceberg.FixedType:
		return &records.Shape{Kind: records.Fixed, Size: t.Len()}, nil
	case iceberg.DecimalType:
		return &records.Shape{Kind: records.Decimal, Precision: t.Precision(), Scale: t.Scale()}, nil
	case *iceberg.MapType:
		k, err := exactShape(t.KeyType, path+".key")
		if err != nil {
			return nil, err
		}
		v, err := exactShape(t.ValueType, path+".value")
		if err != nil {
			return nil, err
		}
		return &records.Shape{Kind: records.Map, Key: k, Elem: v}, nil
	}
	if s, ok, err := childShapes(t, path, exactShape); ok {
		return s, err
	}
	return nil, fmt.Errorf("column %s has type %s, which no registry schema produces", path, t)
}
