package schemas

import (
	"fmt"
	"strings"

	"github.com/hamba/avro/v2"

	"github.com/floe-io/floe/internal/records"
)

// MaxRecursion is how many times a recursive type may appear along one
// path, the outermost included. Iceberg schemas are finite, so a recursive
// Avro record, Protobuf message or JSON Schema $ref is unrolled this many
// levels; the field that would recurse once more has no column, and a
// record that fills it is a bad record naming the field.
const MaxRecursion = 4

// avroOp is what an avroNode decodes.
type avroOp uint8

const (
	aNull avroOp = iota
	aBool
	aInt
	aLong
	aFloat
	aDouble
	aBytes
	aString
	aRecord
	aEnum
	aArray
	aMap
	aOptional // union of null and one type
	aUnion    // other unions: a struct with one field per branch
	aFixed
	aDecimalBytes
	aDecimalFixed
	aUUID
	aDate
	aTimeMillis
	aTimeMicros
	aTimestampMillis
	aTimestampMicros
	aLocalMillis
	aLocalMicros
	aCut // a recursive field past MaxRecursion: must be null or empty
)

// avroNode is one compiled Avro type: a tree unrolled like the shape.
type avroNode struct {
	op       avroOp
	fields   []avroField // record
	elem     *avroNode   // array, map, optional's value
	branches []*avroNode // union (nil entry: the null branch)
	names    []string    // union branch field names
	nullIdx  int         // optional: index of the null branch
	symbols  []string    // enum
	size     int         // fixed
	cutName  string      // the recursive type a cut stands for
}

type avroField struct {
	name string
	node *avroNode
	keep bool // false for fields of type null: no column
}

// compileAvro parses an Avro schema (with named types from references
// already in cache) into a decoder tree and the shape of its values.
func compileAvro(text string, cache *avro.SchemaCache) (*avroNode, *records.Shape, error) {
	sc, err := avro.ParseWithCache(text, "", cache)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing Avro schema: %w", err)
	}
	c := &avroCompiler{depth: map[string]int{}}
	n, s, err := c.compile(sc, "")
	if err != nil {
		return nil, nil, err
	}
	if s == nil || s.Kind != records.Struct || n.op != aRecord {
		// A value that is not a record (a string, a union...) becomes one
		// column, "value".
		wrapped := &records.Shape{Kind: records.Struct}
		if s != nil {
			wrapped.Fields = []*records.Field{{Name: "value", Shape: s}}
		}
		return &avroNode{op: aRecord, fields: []avroField{{name: "value", node: n, keep: s != nil}}}, wrapped, nil
	}
	return n, s, nil
}

type avroCompiler struct {
	depth map[string]int // named record -> nesting on the current path
}

func prim(k records.Kind) *records.Shape { return &records.Shape{Kind: k} }

// element compiles the items of an array or the values of a map at path
// (suffix marks them in nested paths); they may not be null alone.
func (c *avroCompiler) element(sc avro.Schema, path, suffix, what string) (*avroNode, *records.Shape, error) {
	n, shape, err := c.compile(sc, path+suffix)
	if err != nil {
		return nil, nil, err
	}
	if shape == nil {
		return nil, nil, fmt.Errorf("%w: field %s: %s of null", ErrUnsupported, path, what)
	}
	return n, shape, nil
}

// compile returns the node and shape of one schema; a nil shape means the
// type has no column (null).
func (c *avroCompiler) compile(sc avro.Schema, path string) (*avroNode, *records.Shape, error) {
	if ref, ok := sc.(*avro.RefSchema); ok {
		sc = ref.Schema()
	}
	switch s := sc.(type) {
	case *avro.PrimitiveSchema:
		return c.primitive(s, path)
	case *avro.RecordSchema:
		name := s.FullName()
		if c.depth[name] >= MaxRecursion {
			return &avroNode{op: aCut, cutName: name}, nil, nil
		}
		c.depth[name]++
		defer func() { c.depth[name]-- }()
		n := &avroNode{op: aRecord}
		shape := &records.Shape{Kind: records.Struct}
		for _, f := range s.Fields() {
			fp := joinPath(path, f.Name())
			fn, fs, err := c.compile(f.Type(), fp)
			if err != nil {
				return nil, nil, err
			}
			n.fields = append(n.fields, avroField{name: f.Name(), node: fn, keep: fs != nil})
			if fs != nil {
				shape.Fields = append(shape.Fields, &records.Field{Name: f.Name(), Shape: fs})
			}
		}
		return n, shape, nil
	case *avro.EnumSchema:
		return &avroNode{op: aEnum, symbols: s.Symbols()}, prim(records.String), nil
	case *avro.ArraySchema:
		en, es, err := c.element(s.Items(), path, "[]", "array")
		if err != nil {
			return nil, nil, err
		}
		return &avroNode{op: aArray, elem: en}, &records.Shape{Kind: records.List, Elem: es}, nil
	case *avro.MapSchema:
		vn, vs, err := c.element(s.Values(), path, "{}", "map")
		if err != nil {
			return nil, nil, err
		}
		return &avroNode{op: aMap, elem: vn}, &records.Shape{Kind: records.Map, Key: prim(records.String), Elem: vs}, nil
	case *avro.UnionSchema:
		return c.union(s, path)
	case *avro.FixedSchema:
		if l, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
			return &avroNode{op: aDecimalFixed, size: s.Size()}, decimalShape(l), nil
		}
		return &avroNode{op: aFixed, size: s.Size()}, &records.Shape{Kind: records.Fixed, Size: s.Size()}, nil
	}
	return nil, nil, fmt.Errorf("%w: field %s: Avro type %s", ErrUnsupported, path, sc.Type())
}

func decimalShape(l *avro.DecimalLogicalSchema) *records.Shape {
	return &records.Shape{Kind: records.Decimal, Precision: l.Precision(), Scale: l.Scale()}
}

func (c *avroCompiler) primitive(s *avro.PrimitiveSchema, path string) (*avroNode, *records.Shape, error) {
	if l := s.Logical(); l != nil {
		switch l.Type() {
		case avro.Decimal:
			if d, ok := l.(*avro.DecimalLogicalSchema); ok && s.Type() == avro.Bytes {
				if d.Precision() > 38 {
					return nil, nil, fmt.Errorf("%w: field %s: decimal precision %d is above Iceberg's 38", ErrUnsupported, path, d.Precision())
				}
				return &avroNode{op: aDecimalBytes}, decimalShape(d), nil
			}
		case avro.UUID:
			if s.Type() == avro.String {
				return &avroNode{op: aUUID}, prim(records.UUID), nil
			}
		case avro.Date:
			return &avroNode{op: aDate}, prim(records.Date), nil
		case avro.TimeMillis:
			return &avroNode{op: aTimeMillis}, prim(records.Time), nil
		case avro.TimeMicros:
			return &avroNode{op: aTimeMicros}, prim(records.Time), nil
		case avro.TimestampMillis:
			return &avroNode{op: aTimestampMillis}, prim(records.TimestampTz), nil
		case avro.TimestampMicros:
			return &avroNode{op: aTimestampMicros}, prim(records.TimestampTz), nil
		case avro.LocalTimestampMillis:
			return &avroNode{op: aLocalMillis}, prim(records.Timestamp), nil
		case avro.LocalTimestampMicros:
			return &avroNode{op: aLocalMicros}, prim(records.Timestamp), nil
		}
		// Unknown logical types fall back to their underlying type, as the
		// Avro specification says readers must.
	}
	switch s.Type() {
	case avro.Null:
		return &avroNode{op: aNull}, nil, nil
	case avro.Boolean:
		return &avroNode{op: aBool}, prim(records.Bool), nil
	case avro.Int:
		return &avroNode{op: aInt}, prim(records.Int), nil
	case avro.Long:
		return &avroNode{op: aLong}, prim(records.Long), nil
	case avro.Float:
		return &avroNode{op: aFloat}, prim(records.Float), nil
	case avro.Double:
		return &avroNode{op: aDouble}, prim(records.Double), nil
	case avro.Bytes:
		return &avroNode{op: aBytes}, prim(records.Bytes), nil
	case avro.String:
		return &avroNode{op: aString}, prim(records.String), nil
	}
	return nil, nil, fmt.Errorf("%w: field %s: Avro type %s", ErrUnsupported, path, s.Type())
}

// union maps ["null", T] (either order) to an optional T, and any other
// union to a struct with one optional field per non-null branch, named by
// the branch's type (a named type's name, else the primitive's).
func (c *avroCompiler) union(s *avro.UnionSchema, path string) (*avroNode, *records.Shape, error) {
	types := s.Types()
	nullIdx := -1
	for i, t := range types {
		if t.Type() == avro.Null {
			nullIdx = i
		}
	}
	if len(types) == 2 && nullIdx >= 0 {
		vn, vs, err := c.compile(types[1-nullIdx], path)
		if err != nil {
			return nil, nil, err
		}
		if vs == nil {
			return &avroNode{op: aOptional, nullIdx: nullIdx, elem: vn}, nil, nil // a cut recursive branch
		}
		return &avroNode{op: aOptional, nullIdx: nullIdx, elem: vn}, vs, nil
	}
	n := &avroNode{op: aUnion, branches: make([]*avroNode, len(types)), names: make([]string, len(types))}
	shape := &records.Shape{Kind: records.Struct}
	for i, t := range types {
		if i == nullIdx {
			continue
		}
		name := branchName(t)
		bn, bs, err := c.compile(t, joinPath(path, name))
		if err != nil {
			return nil, nil, err
		}
		n.branches[i], n.names[i] = bn, name
		if bs != nil {
			shape.Fields = append(shape.Fields, &records.Field{Name: name, Shape: bs})
		}
	}
	return n, shape, nil
}

func branchName(t avro.Schema) string {
	if ref, ok := t.(*avro.RefSchema); ok {
		t = ref.Schema()
	}
	if n, ok := t.(avro.NamedSchema); ok {
		return n.Name()
	}
	if p, ok := t.(*avro.PrimitiveSchema); ok && p.Logical() != nil {
		return strings.ReplaceAll(string(p.Logical().Type()), "-", "_")
	}
	return string(t.Type())
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
