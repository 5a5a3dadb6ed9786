package iceberg

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/jsontext"
)

// A json table's record that fit the table's columns when it was fetched
// arrives as its JSON bytes (records.Record.JSON, worker/ingest
// jsoncheck.go), not as a decoded map: its payload is appended here
// straight from the bytes to the columns' builders, with no map, no boxed
// value and no string allocated per field. The row is the one appendColumn
// builds from the value decoded into a map (FuzzJSONRow compares them):
//   - a string is its decoded text, invalid UTF-8 replaced as encoding/json
//     replaces it;
//   - a number goes into a long column as an integer, into a double column
//     as parsed (a long column widened since the check takes it as double);
//   - null, and a field the object does not name, is a null;
//   - a key that names no column is skipped (the map path never reads it).
//
// The worker's check has already held the bytes to the JSON grammar and
// the columns' types; here a value the column cannot take is an error
// naming the column, as appendValue's, and input outside the grammar is
// refused or read leniently but never panics (FuzzJSONRow).

// jsonRows appends JSON rows to the payload columns of one schema.
type jsonRows struct {
	names []string       // payload columns, in schema order
	cols  []int          // their index among the schema's fields
	types []iceberg.Type // their types
	r     jsonReader
}

func newJSONRows(fields []iceberg.NestedField) *jsonRows {
	j := &jsonRows{}
	for i, f := range fields {
		if metadataColumn(f.Name) {
			continue
		}
		j.names = append(j.names, f.Name)
		j.cols = append(j.cols, i)
		j.types = append(j.types, f.Type)
	}
	return j
}

// metadataColumn reports whether a column is one of Floe's own, which
// appendColumn fills from the record rather than its value.
func metadataColumn(name string) bool {
	switch name {
	case ColTopic, ColPartition, ColOffset, ColTimestamp, ColKey, ColHeaders:
		return true
	}
	return false
}

// appendRow appends the payload columns of one record held as JSON.
func (j *jsonRows) appendRow(rb *array.RecordBuilder, data []byte) error {
	j.r = jsonReader{data: data, seen: j.r.seen[:0]}
	r := &j.r
	r.ws()
	if r.pos >= len(data) || data[r.pos] != '{' {
		return fmt.Errorf("value: not a JSON object")
	}
	err := r.object(len(j.names), func(name []byte, from int) int {
		return findName(j.names, name, from)
	}, func(i int) error {
		if err := r.value(rb.Field(j.cols[i]), j.types[i]); err != nil {
			return fmt.Errorf("column %s%w", j.names[i], err)
		}
		return nil
	}, func(i int) { rb.Field(j.cols[i]).AppendNull() })
	if err != nil {
		return err
	}
	r.ws()
	if r.pos != len(data) {
		return fmt.Errorf("value: trailing data after the JSON object")
	}
	return nil
}

// findName finds name among names, trying from first: producers write a
// fixed field order, so the field after the last one matched is likely.
func findName(names []string, name []byte, from int) int {
	if from < len(names) && names[from] == string(name) {
		return from
	}
	for i, n := range names {
		if n == string(name) {
			return i
		}
	}
	return -1
}

// jsonReader reads one JSON document, appending its values to builders.
type jsonReader struct {
	data []byte
	pos  int
	seen []bool // the fields named so far in each object being read, stacked
}

func (r *jsonReader) ws() { r.pos = jsontext.SkipSpace(r.data, r.pos) }

func (r *jsonReader) mismatch(t iceberg.Type) error {
	return fmt.Errorf(" is %s, value is %s", t, jsontext.Describe(r.data, r.pos))
}

func (r *jsonReader) literal(word string) bool {
	if len(r.data)-r.pos < len(word) || string(r.data[r.pos:r.pos+len(word)]) != word {
		return false
	}
	r.pos += len(word)
	return true
}

// value appends the value at the current position to b, a builder of t.
func (r *jsonReader) value(b array.Builder, t iceberg.Type) error {
	r.ws()
	if r.pos >= len(r.data) {
		return fmt.Errorf(": unexpected end of the JSON value")
	}
	c := r.data[r.pos]
	switch {
	case c == 'n':
		if !r.literal("null") {
			return fmt.Errorf(": invalid JSON literal")
		}
		b.AppendNull()
		return nil
	case c == '"':
		return r.appendString(b, t)
	case c == 't' || c == 'f':
		if _, ok := t.(iceberg.BooleanType); !ok {
			return r.mismatch(t)
		}
		if !r.literal("true") && !r.literal("false") {
			return fmt.Errorf(": invalid JSON literal")
		}
		b.(*array.BooleanBuilder).Append(c == 't')
		return nil
	case c == '-' || (c >= '0' && c <= '9'):
		return r.appendNumber(b, t)
	case c == '[':
		lt, ok := t.(*iceberg.ListType)
		if !ok {
			return r.mismatch(t)
		}
		return r.appendList(b.(*array.ListBuilder), lt)
	case c == '{':
		st, ok := t.(*iceberg.StructType)
		if !ok {
			return r.mismatch(t)
		}
		return r.appendStruct(b.(*array.StructBuilder), st)
	}
	return fmt.Errorf(": invalid JSON at byte %d", r.pos)
}

func (r *jsonReader) appendString(b array.Builder, t iceberg.Type) error {
	if _, ok := t.(iceberg.StringType); !ok {
		return r.mismatch(t)
	}
	s, err := r.str()
	if err != nil {
		return err
	}
	b.(*array.StringBuilder).BinaryBuilder.Append(s)
	return nil
}

// str reads the string at the current position: its bytes as they stand
// when they hold no escape and are valid UTF-8, which is nearly always;
// otherwise decoded as encoding/json decodes them.
func (r *jsonReader) str() ([]byte, error) {
	r.pos++ // opening quote
	start := r.pos
	escaped := false
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case '"':
			s := r.data[start:r.pos]
			r.pos++
			if escaped {
				var out string
				if err := json.Unmarshal(r.data[start-1:r.pos], &out); err != nil {
					return nil, fmt.Errorf(": bad JSON string: %v", err)
				}
				return []byte(out), nil
			}
			if !utf8.Valid(s) {
				return []byte(string([]rune(string(s)))), nil
			}
			return s, nil
		case '\\':
			escaped = true
			r.pos += 2
			continue
		}
		r.pos++
	}
	return nil, fmt.Errorf(": unterminated JSON string")
}

// appendNumber appends the number at the current position to a numeric
// column, as appendNumber appends the value the worker decodes from it.
func (r *jsonReader) appendNumber(b array.Builder, t iceberg.Type) error {
	start := r.pos
	integral := true
	for r.pos < len(r.data) {
		c := r.data[r.pos]
		if c == '.' || c == 'e' || c == 'E' {
			integral = false
		} else if (c < '0' || c > '9') && c != '-' && c != '+' {
			break
		}
		r.pos++
	}
	n := r.data[start:r.pos]
	switch t.(type) {
	case iceberg.Int64Type, iceberg.Int32Type:
		if !integral {
			return fmt.Errorf(" is %s, value %s has a fraction", t, n)
		}
		x, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			return fmt.Errorf(" is %s, value %s does not fit", t, n)
		}
		if _, ok := t.(iceberg.Int32Type); ok {
			if int64(int32(x)) != x {
				return fmt.Errorf(" is %s, value %s does not fit", t, n)
			}
			b.(*array.Int32Builder).Append(int32(x))
			return nil
		}
		b.(*array.Int64Builder).Append(x)
	case iceberg.Float64Type, iceberg.Float32Type:
		x, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return fmt.Errorf(" is %s, value %s: %v", t, n, err)
		}
		if _, ok := t.(iceberg.Float32Type); ok {
			b.(*array.Float32Builder).Append(float32(x))
			return nil
		}
		b.(*array.Float64Builder).Append(x)
	default:
		return fmt.Errorf(" is %s, value is a number", t)
	}
	return nil
}

func (r *jsonReader) appendList(lb *array.ListBuilder, t *iceberg.ListType) error {
	r.pos++ // [
	lb.Append(true)
	r.ws()
	if r.pos < len(r.data) && r.data[r.pos] == ']' {
		r.pos++
		return nil
	}
	for {
		if err := r.value(lb.ValueBuilder(), t.Element); err != nil {
			return fmt.Errorf("[]%w", err)
		}
		done, err := r.separator(']')
		if err != nil || done {
			return err
		}
	}
}

func (r *jsonReader) appendStruct(sb *array.StructBuilder, t *iceberg.StructType) error {
	sb.Append(true)
	fields := t.FieldList
	return r.object(len(fields), func(name []byte, from int) int {
		if from < len(fields) && fields[from].Name == string(name) {
			return from
		}
		for i, f := range fields {
			if f.Name == string(name) {
				return i
			}
		}
		return -1
	}, func(i int) error {
		if err := r.value(sb.FieldBuilder(i), fields[i].Type); err != nil {
			return fmt.Errorf(".%s%w", fields[i].Name, err)
		}
		return nil
	}, func(i int) { sb.FieldBuilder(i).AppendNull() })
}

// object reads the object at the current position into n fields: find
// gives a key's field (or -1: skipped), put appends a field's value, and
// null is called for each field the object does not name.
func (r *jsonReader) object(n int, find func(name []byte, from int) int, put func(i int) error, null func(i int)) error {
	r.pos++ // {
	base := len(r.seen)
	for range n {
		r.seen = append(r.seen, false)
	}
	next := 0
	r.ws()
	if r.pos < len(r.data) && r.data[r.pos] == '}' {
		r.pos++
	} else if err := r.members(base, find, put, &next); err != nil {
		return err
	}
	for i, seen := range r.seen[base:] {
		if !seen {
			null(i)
		}
	}
	r.seen = r.seen[:base]
	return nil
}

func (r *jsonReader) members(base int, find func(name []byte, from int) int, put func(i int) error, next *int) error {
	for {
		r.ws()
		if r.pos >= len(r.data) || r.data[r.pos] != '"' {
			return fmt.Errorf(": expected a JSON field name at byte %d", r.pos)
		}
		name, err := r.str()
		if err != nil {
			return err
		}
		r.ws()
		if r.pos >= len(r.data) || r.data[r.pos] != ':' {
			return fmt.Errorf(": expected : after JSON field name %q", name)
		}
		r.pos++
		switch i := find(name, *next); {
		case i < 0:
			if err := r.skip(); err != nil {
				return err
			}
		case r.seen[base+i]:
			return fmt.Errorf(": field %q appears twice in one JSON object", name)
		default:
			r.seen[base+i], *next = true, i+1
			if err := put(i); err != nil {
				return err
			}
		}
		done, err := r.separator('}')
		if err != nil || done {
			return err
		}
	}
}

// separator reads what follows a member: a comma, or the closer (done).
func (r *jsonReader) separator(closer byte) (done bool, err error) {
	r.ws()
	if r.pos < len(r.data) && (r.data[r.pos] == ',' || r.data[r.pos] == closer) {
		r.pos++
		return r.data[r.pos-1] == closer, nil
	}
	return false, fmt.Errorf(": expected , or %c at byte %d", closer, r.pos)
}

// skip moves past one value without appending it, iteratively, so a
// deep value cannot exhaust the stack.
func (r *jsonReader) skip() error {
	r.ws()
	depth := 0
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case '"':
			if _, err := r.str(); err != nil {
				return err
			}
			if depth == 0 {
				return nil
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return nil // the end of the object or array holding the value
			}
			depth--
			if depth == 0 {
				r.pos++
				return nil
			}
		case ',':
			if depth == 0 {
				return nil
			}
		}
		r.pos++
	}
	if depth > 0 {
		return fmt.Errorf(": unterminated JSON value")
	}
	return nil
}
