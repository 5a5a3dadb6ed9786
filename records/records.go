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
	// Value is the decoded payload of a json table: values are nil, bool,
	// int64, float64, string, map[string]any or []any, conforming to the
	// table's Shape.
	Value map[string]any
	// Raw is the undecoded value: the payload of a raw table, and of a
	// dead-letter record.
	Raw []byte
	// Err is why a dead-letter record could not be decoded.
	Err string
	// Mem is the memory charged to the node's budget for this record.
	Mem int64
}

// Size estimates the memory the record holds, for budgeting.
func (r *Record) Size() int64 {
	n := int64(96 + len(r.Topic) + len(r.Key) + len(r.Raw) + len(r.Err))
	for _, h := range r.Headers {
		n += int64(len(h.Key) + len(h.Value) + 32)
	}
	return n
}

// Kind is the type of a schemaless value.
type Kind uint8

// Kinds. Long and Double are JSON numbers without and with a fraction or
// exponent.
const (
	Bool Kind = iota + 1
	Long
	Double
	String
	Struct
	List
)

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
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Shape is the inferred type of a value.
type Shape struct {
	Kind   Kind
	Fields []*Field // Struct: in order of first appearance
	Elem   *Shape   // List
}

// Field is one field of a Struct shape.
type Field struct {
	Name  string
	Shape *Shape
	// Committed is true once the field exists in the table; a committed
	// field's type can no longer widen.
	Committed bool
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
	c := &Shape{Kind: s.Kind, Elem: s.Elem.Clone()}
	for _, f := range s.Fields {
		c.Fields = append(c.Fields, &Field{Name: f.Name, Shape: f.Shape.Clone(), Committed: f.Committed})
	}
	return c
}

// HasUncommitted reports whether any field in the tree is not yet committed.
func (s *Shape) HasUncommitted() bool {
	if s == nil {
		return false
	}
	for _, f := range s.Fields {
		if !f.Committed || f.Shape.HasUncommitted() {
			return true
		}
	}
	return s.Elem.HasUncommitted()
}

// MarkCommitted marks every field in the tree committed.
func (s *Shape) MarkCommitted() {
	if s == nil {
		return
	}
	for _, f := range s.Fields {
		f.Committed = true
		f.Shape.MarkCommitted()
	}
	s.Elem.MarkCommitted()
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
	}
	return s.Kind.String()
}
