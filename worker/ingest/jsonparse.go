package ingest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/floe-io/floe/internal/jsontext"
	"github.com/floe-io/floe/internal/records"
)

// parser decodes one JSON document straight into values conformed to a
// shape, in a single pass. Shape changes (new fields, long widened to double)
// are collected and applied only when the whole document is accepted.
// It replaces encoding/json + a separate conform pass, which cost three
// times as much per record (see BenchmarkDecodeJSON).
type parser struct {
	data  []byte
	pos   int
	adds  []pendingAdd
	widen []*records.Shape
	path  []string // field names down to the current value, joined only for errors
	lim   records.Limits
	// depthExceeded: skip stopped at a value nesting past lim.MaxDepth.
	depthExceeded bool
}

func (p *parser) where() string {
	out := ""
	for _, n := range p.path {
		switch {
		case n == "[]":
			out += n
		case out == "":
			out = n
		default:
			out += "." + n
		}
	}
	return out
}

type pendingAdd struct {
	parent *records.Shape
	field  *records.Field
}

func (p *parser) fail(format string, args ...any) error {
	return fmt.Errorf("%w: invalid JSON at byte %d: %s", records.ErrBadRecord, p.pos, fmt.Sprintf(format, args...))
}

// separator reads what follows a member of an array or object: a comma
// (another member follows) or closer (done).
func (p *parser) separator(closer byte, what string) (done bool, err error) {
	p.ws()
	switch {
	case p.pos >= len(p.data):
		return false, p.fail("unterminated %s", what)
	case p.data[p.pos] == ',' || p.data[p.pos] == closer:
		p.pos++
		return p.data[p.pos-1] == closer, nil
	}
	return false, p.fail("expected , or %c in %s", closer, what)
}

func (p *parser) ws() { p.pos = jsontext.SkipSpace(p.data, p.pos) }

// describe names the kind of the value starting at the current position,
// for error messages.
func (p *parser) describe() string { return jsontext.Describe(p.data, p.pos) }

func isNumberByte(c byte) bool { return jsontext.IsNumberByte(c) }

func (p *parser) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.fail("expected %s", word)
	}
	p.pos += len(word)
	return nil
}

// value parses the value at the current position, conformed to s.
func (p *parser) value(s *records.Shape, frozen bool) (any, error) {
	p.ws()
	if p.pos >= len(p.data) {
		return nil, p.fail("unexpected end of input")
	}
	c := p.data[p.pos]
	if c == 'n' {
		return nil, p.literal("null")
	}
	kindOK := func(k records.Kind) error {
		if s.Kind != k {
			return fmt.Errorf("%w: field %s: column is %s, value is %s", records.ErrBadRecord, p.where(), s, p.describe())
		}
		return nil
	}
	switch {
	case c == 't' || c == 'f':
		if err := kindOK(records.Bool); err != nil {
			return nil, err
		}
		if c == 't' {
			return true, p.literal("true")
		}
		return false, p.literal("false")
	case c == '"':
		if err := kindOK(records.String); err != nil {
			return nil, err
		}
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		if s.Kind != records.Long && s.Kind != records.Double {
			return nil, kindOK(records.Long)
		}
		return p.number(s, frozen)
	case c == '[':
		if err := kindOK(records.List); err != nil {
			return nil, err
		}
		if err := p.deeper(); err != nil {
			return nil, err
		}
		out, err := p.array(s, frozen)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return out, nil
	case c == '{':
		if err := kindOK(records.Struct); err != nil {
			return nil, err
		}
		if err := p.deeper(); err != nil {
			return nil, err
		}
		return p.object(s, frozen)
	}
	return nil, p.fail("unexpected character %q", c)
}

// array parses the array at the current position, conformed to s.
func (p *parser) array(s *records.Shape, frozen bool) ([]any, error) {
	p.pos++
	out := []any{}
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return out, nil
	}
	p.path = append(p.path, "[]")
	defer func() { p.path = p.path[:len(p.path)-1] }()
	for {
		v, err := p.value(s.Elem, frozen)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if done, err := p.separator(']', "array"); err != nil {
			return nil, err
		} else if done {
			return out, nil
		}
	}
}

func (p *parser) object(s *records.Shape, frozen bool) (map[string]any, error) {
	p.pos++ // {
	out := make(map[string]any, len(s.Fields))
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return out, nil
	}
	next := 0 // the field expected next (jsonkeys.go)
	for {
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.fail("expected a field name")
		}
		keyStart := p.pos
		var (
			k   string
			f   *records.Field
			err error
		)
		if raw, ok := p.plainKey(); ok {
			if f = p.lookupBytes(s, raw, &next); f != nil {
				k = f.Name
			} else {
				p.pos = keyStart
			}
		}
		if f == nil {
			if k, err = p.str(); err != nil {
				return nil, err
			}
			f = p.lookup(s, k)
		}
		rawKey := p.data[keyStart+1 : p.pos-1]
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.fail("expected : after field name")
		}
		p.pos++
		if len(p.path) == 0 && len(k) >= len(records.MetadataPrefix) && k[:len(records.MetadataPrefix)] == records.MetadataPrefix {
			return nil, fmt.Errorf("%w: field %s collides with Floe's metadata columns (%s*)", records.ErrBadRecord, k, records.MetadataPrefix)
		}
		var v any
		p.path = append(p.path, k)
		if f != nil {
			v, err = p.value(f.Shape, frozen || f.Committed)
		} else if err = p.newName(s, k, rawKey); err == nil {
			v, err = p.newField(s, k, p.where())
		}
		p.path = p.path[:len(p.path)-1]
		if err != nil {
			return nil, err
		}
		if v != nil {
			out[k] = v
		}
		if done, err := p.separator('}', "object"); err != nil {
			return nil, err
		} else if done {
			return out, nil
		}
	}
}

// lookup finds a field of s, including one added earlier in this document.
func (p *parser) lookup(s *records.Shape, name string) *records.Field {
	if f := s.Lookup(name); f != nil {
		return f
	}
	for _, a := range p.adds {
		if a.parent == s && a.field.Name == name {
			return a.field
		}
	}
	return nil
}

// newField parses a value for a field the shape does not have: generically,
// then inferred and conformed (the rare path).
func (p *parser) newField(s *records.Shape, name, path string) (any, error) {
	p.ws()
	start := p.pos
	if err := p.skip(); err != nil {
		return nil, err
	}
	raw := p.data[start:p.pos]
	if p.depthExceeded {
		return nil, p.tooDeep()
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%w: invalid JSON in field %s: %v", records.ErrBadRecord, path, jsonSyntaxErr(raw))
	}
	var v any
	dec := json.NewDecoder(bytesReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: invalid JSON in field %s: %v", records.ErrBadRecord, path, err)
	}
	ns, err := infer(v, path)
	if err != nil || ns == nil {
		return nil, err
	}
	reorder(ns, orderOf(raw)) // nested columns in the record's order (jsonorder.go)
	// The new field's value sits at depth len(p.path); its names and
	// nesting are checked before it can become columns.
	if err := p.lim.Check(ns, len(p.path), path); err != nil {
		return nil, err
	}
	out, err := conform(ns, v, false, path, true)
	if err != nil {
		return nil, err
	}
	p.adds = append(p.adds, pendingAdd{parent: s, field: &records.Field{Name: name, Shape: ns}})
	return out, nil
}

// skip moves past one value without building it.
func (p *parser) skip() error {
	p.ws()
	if p.pos >= len(p.data) {
		return p.fail("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '"':
		_, err := p.str()
		return err
	case c == '{' || c == '[':
		depth := 0
		p.depthExceeded = false
		for p.pos < len(p.data) {
			switch p.data[p.pos] {
			case '"':
				if _, err := p.str(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
				// The value's containers start at depth len(p.path); past
				// the cap the value is refused before it is decoded.
				if len(p.path)+depth > p.lim.MaxDepth {
					p.depthExceeded = true
					return nil
				}
			case '}', ']':
				depth--
				if depth == 0 {
					p.pos++
					return nil
				}
			}
			p.pos++
		}
		return p.fail("unterminated %c", c)
	default:
		for p.pos < len(p.data) && (isNumberByte(p.data[p.pos]) || (p.data[p.pos] >= 'a' && p.data[p.pos] <= 'z')) {
			p.pos++
		}
		return nil
	}
}

func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			s := p.data[start:p.pos]
			p.pos++
			if !utf8.Valid(s) {
				return string([]rune(string(s))), nil // replaces invalid bytes, as encoding/json does
			}
			return string(s), nil
		case c == '\\':
			return p.escapedStr(start)
		case c < 0x20:
			return "", p.fail("control character in string")
		}
		p.pos++
	}
	return "", p.fail("unterminated string")
}

// escapedStr handles strings with escapes through encoding/json.
func (p *parser) escapedStr(start int) (string, error) {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case '\\':
			p.pos += 2
			continue
		case '"':
			var s string
			if err := json.Unmarshal(p.data[start-1:p.pos+1], &s); err != nil {
				return "", p.fail("bad string: %v", err)
			}
			p.pos++
			return s, nil
		}
		p.pos++
	}
	return "", p.fail("unterminated string")
}

func (p *parser) number(s *records.Shape, frozen bool) (any, error) {
	start := p.pos
	for p.pos < len(p.data) && isNumberByte(p.data[p.pos]) {
		p.pos++
	}
	n := json.Number(p.data[start:p.pos])
	if !validNumber(p.data[start:p.pos]) {
		return nil, p.fail("bad number %q", string(n))
	}
	if isIntegral(n) && s.Kind == records.Long {
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: field %s: %s does not fit a long", records.ErrBadRecord, p.where(), n)
		}
		return i, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return nil, fmt.Errorf("%w: field %s: %v", records.ErrBadRecord, p.where(), err)
	}
	if s.Kind == records.Long { // fractional into long
		if frozen {
			return nil, fmt.Errorf("%w: field %s: column is long, value %s has a fraction", records.ErrBadRecord, p.where(), n)
		}
		p.widen = append(p.widen, s) // not in the table yet: widen to double
	}
	return f, nil
}

// decodeJSON parses a record value as a JSON object and conforms it to shape,
// the table's payload Struct shape. Types are inferred for fields the shape
// does not have yet, and shape grows by them, but only when the whole record
// is accepted: a rejected record leaves shape untouched.
//
// Numbers without fraction or exponent are longs, others doubles. A field not
// yet in the table may widen from long to double; once committed it may not
// (Iceberg cannot promote long to double), so a fractional number in a long
// column is a bad record naming the field rather than a silent truncation.
func decodeJSON(shape *records.Shape, data []byte) (map[string]any, error) {
	return decodeJSONWith(shape, data, records.Limits{}.WithDefaults())
}

// decodeJSONWith is decodeJSON within a table's limits: a record nesting
// deeper than lim.MaxDepth, adding a column with a bad name or one that
// collides ignoring case, or taking the table past lim.MaxColumns is bad
// (records.ErrLimit), and the shape is left as it was.
func decodeJSONWith(shape *records.Shape, data []byte, lim records.Limits) (map[string]any, error) {
	out, _, err := decodeJSONChanged(shape, data, lim)
	return out, err
}

// decodeJSONChanged is decodeJSONWith that also says whether it changed
// shape (added or widened a column).
func decodeJSONChanged(shape *records.Shape, data []byte, lim records.Limits) (map[string]any, bool, error) {
	p := parser{data: data, lim: lim}
	p.ws()
	if p.pos >= len(data) {
		return nil, false, fmt.Errorf("%w: invalid JSON: empty value", records.ErrBadRecord)
	}
	if data[p.pos] != '{' {
		if !json.Valid(data) {
			return nil, false, fmt.Errorf("%w: invalid JSON: %v", records.ErrBadRecord, jsonSyntaxErr(data))
		}
		return nil, false, fmt.Errorf("%w: value is %s, not a JSON object", records.ErrBadRecord, p.describe())
	}
	out, err := p.object(shape, false)
	if err != nil {
		return nil, false, err
	}
	p.ws()
	if p.pos != len(data) {
		return nil, false, fmt.Errorf("%w: invalid JSON: trailing data after the value", records.ErrBadRecord)
	}
	if err := p.checkColumns(shape); err != nil {
		return nil, false, err
	}
	for _, a := range p.adds {
		if a.parent.Lookup(a.field.Name) == nil {
			a.parent.Fields = append(a.parent.Fields, a.field)
		}
	}
	for _, s := range p.widen {
		s.Kind = records.Double
	}
	return out, len(p.adds) > 0 || len(p.widen) > 0, nil
}

func jsonSyntaxErr(data []byte) error {
	var v any
	return json.Unmarshal(data, &v)
}
