package records

import (
	"fmt"
	"time"
)

// Header is one Kafka record header.
type Header struct {
	Key   string
	Value []byte
}

// Record is one Kafka record after decoding.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Timestamp time.Time
	Key       []byte
	Headers   []Header
	// Value is the decoded payload: values are nil, bool, int64, float64,
	// string, map[string]any or []any for json tables, and for schema
	// formats also the Go types listed with each Kind; they conform to the
	// table's Shape. A key decoded with its registry schema is the field
	// KeyDecodedColumn of Value.
	Value map[string]any
	// JSON is the value of a json table's record that fit the table's
	// columns when it was fetched, kept as fetched instead of decoded into
	// Value (nil then): the sink appends it straight to the file's
	// columns, as it would append Value decoded from it. Its bytes are
	// never modified.
	JSON []byte
	// Raw is the undecoded value: the payload of a raw table, and of a
	// dead-letter record.
	Raw []byte
	// Err is why a dead-letter record could not be decoded.
	Err string
	// Mem is the memory charged to the node's budget for this record.
	Mem int64
	// Tombstone: in an upsert table keyed by the Kafka key, the record
	// (a null value) deletes its key; it is written as a row with a null
	// value that its own commit deletes.
	Tombstone bool
}

// Size estimates the memory the record holds, for budgeting.
func (r *Record) Size() int64 {
	n := int64(96 + len(r.Topic) + len(r.Key) + len(r.Raw) + len(r.Err))
	for _, h := range r.Headers {
		n += int64(len(h.Key) + len(h.Value) + 32)
	}
	return n
}

// Kind is the type of a schemaless value. Its numbers are part of the
// replicated format (a Shape travels in fsm.RequestSchema): append only,
// never renumber.
type Kind uint8

// Kinds. Long and Double are JSON numbers without and with a fraction or
// exponent; JSON inference produces only the first six. The others come from
// registry schemas (Avro, Protobuf, JSON Schema); the Go type of their values
// is given with each.
const (
	Bool        Kind = iota + 1 // bool
	Long                        // int64
	Double                      // float64
	String                      // string
	Struct                      // map[string]any
	List                        // []any
	Int                         // int32
	Float                       // float32
	Bytes                       // []byte
	Fixed                       // []byte of Shape.Size bytes
	Decimal                     // *big.Int unscaled, with Shape.Precision and Shape.Scale
	Date                        // Days (since 1970-01-01)
	Time                        // time.Duration since midnight (microsecond precision)
	Timestamp                   // time.Time, without zone (local date-time read as UTC)
	TimestampTz                 // time.Time, an instant
	UUID                        // [16]byte
	Map                         // []MapEntry, keys of Shape.Key, values of Shape.Elem
)

// Days is a calendar date as days since 1970-01-01.
type Days int32

// MapEntry is one key/value pair of a Map value.
type MapEntry struct {
	Key, Value any
}

func (k Kind) String() string {
	switch k {
	case Bool:
		return "boolean"
	case Long:
		return "long"
	case Double:
		return "double"
	case String:
		return "string"
	case Struct:
		return "struct"
	case List:
		return "list"
	case Int:
		return "int"
	case Float:
		return "float"
	case Bytes:
		return "binary"
	case Fixed:
		return "fixed"
	case Decimal:
		return "decimal"
	case Date:
		return "date"
	case Time:
		return "time"
	case Timestamp:
		return "timestamp"
	case TimestampTz:
		return "timestamptz"
	case UUID:
		return "uuid"
	case Map:
		return "map"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Shape is the type of a value: inferred from JSON, or converted from a
// registry schema.
//
// A Shape is replicated (fsm.RequestSchema carries it as JSON), so its JSON
// keys are frozen at the Go field names it was first encoded with (no tags
// then): a node of the previous release reads them, and a Go rename no
// longer changes the Raft log. records_test.go pins the encoding.
type Shape struct {
	Kind   Kind     `json:"Kind"`
	Fields []*Field `json:"Fields"` // Struct: in order of first appearance
	Elem   *Shape   `json:"Elem"`   // List element, Map value
	Key    *Shape   `json:"Key"`    // Map key
	// Precision and Scale of a Decimal, Size in bytes of a Fixed.
	Precision int `json:"Precision"`
	Scale     int `json:"Scale"`
	Size      int `json:"Size"`
	// SchemaID (on a table's top-level shape) is the highest registry
	// schema id the table follows; CommittedSchemaID what the table has
	// recorded. A schema with a lower id is an older writer: its narrower
	// types fit the table's wider columns.
	SchemaID          int `json:"SchemaID"`
	CommittedSchemaID int `json:"CommittedSchemaID"`
}

// Field is one field of a Struct shape (keys frozen as Shape's).
type Field struct {
	Name  string `json:"Name"`
	Shape *Shape `json:"Shape"`
	// Committed is true once the field exists in the table; a committed
	// field's type can no longer widen.
	Committed bool `json:"Committed"`
}

// Lookup returns the struct field with the given name.
func (s *Shape) Lookup(name string) *Field {
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Clone deep-copies a shape.
func (s *Shape) Clone() *Shape {
	if s == nil {
		return nil
	}
	c := &Shape{Kind: s.Kind, Elem: s.Elem.Clone(), Key: s.Key.Clone(), Precision: s.Precision, Scale: s.Scale, Size: s.Size,
		SchemaID: s.SchemaID, CommittedSchemaID: s.CommittedSchemaID}
	for _, f := range s.Fields {
		c.Fields = append(c.Fields, &Field{Name: f.Name, Shape: f.Shape.Clone(), Committed: f.Committed})
	}
	return c
}

// HasUncommitted reports whether any field in the tree is not yet committed
// (or a newer schema id not yet recorded).
func (s *Shape) HasUncommitted() bool {
	if s == nil {
		return false
	}
	if s.SchemaID > s.CommittedSchemaID {
		return true
	}
	for _, f := range s.Fields {
		if !f.Committed || f.Shape.HasUncommitted() {
			return true
		}
	}
	return s.Elem.HasUncommitted() || s.Key.HasUncommitted()
}

// MarkCommitted marks every field in the tree committed.
func (s *Shape) MarkCommitted() {
	if s == nil {
		return
	}
	s.CommittedSchemaID = s.SchemaID
	for _, f := range s.Fields {
		f.Committed = true
		f.Shape.MarkCommitted()
	}
	s.Elem.MarkCommitted()
	s.Key.MarkCommitted()
}

func (s *Shape) String() string {
	if s == nil {
		return "null"
	}
	switch s.Kind {
	case Struct:
		out := "struct<"
		for i, f := range s.Fields {
			if i > 0 {
				out += ", "
			}
			out += f.Name + ": " + f.Shape.String()
		}
		return out + ">"
	case List:
		return "list<" + s.Elem.String() + ">"
	case Map:
		return "map<" + s.Key.String() + ", " + s.Elem.String() + ">"
	case Decimal:
		return fmt.Sprintf("decimal(%d, %d)", s.Precision, s.Scale)
	case Fixed:
		return fmt.Sprintf("fixed[%d]", s.Size)
	}
	return s.Kind.String()
}
