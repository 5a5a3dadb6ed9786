package schemas

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/floe-io/floe/records"
)

// jsonShape converts a JSON Schema into the shape of its values. refs maps
// a reference name (another subject's schema) to its parsed root.
type jsonCompiler struct {
	root  *jnode
	refs  map[string]*jnode
	depth map[string]int
}

// jsonType is a compiled JSON Schema node: how to read a JSON value.
type jsonType struct {
	shape    *records.Shape
	format   string               // string formats: date, date-time, time, uuid, base64
	fields   map[string]*jsonType // object properties
	elem     *jsonType            // array items, map values
	branches map[string]*jsonType // union: JSON kind -> branch (field named by the kind)
	cut      string               // a recursive $ref past MaxRecursion
}

func compileJSONSchema(text string, refs map[string]*jnode) (*jsonType, error) {
	root, err := parseOrdered([]byte(text))
	if err != nil {
		return nil, err
	}
	// The root counts as one occurrence of "#", as a recursive Avro record
	// or Protobuf message counts itself.
	c := &jsonCompiler{root: root, refs: refs, depth: map[string]int{"#": 1}}
	t, err := c.compile(root, "")
	if err != nil {
		return nil, err
	}
	if t == nil || t.shape.Kind != records.Struct || t.branches != nil {
		// Not an object: one column, "value".
		w := &jsonType{shape: &records.Shape{Kind: records.Struct}, fields: map[string]*jsonType{}}
		if t != nil {
			w.shape.Fields = []*records.Field{{Name: "value", Shape: t.shape}}
			w.fields["value"] = t
		}
		w.format = "wrap"
		return w, nil
	}
	return t, nil
}

// resolve follows a $ref: "#/definitions/X", "#/$defs/X", "#", or the name
// of a referenced schema (optionally with a "#/..." pointer into it).
func (c *jsonCompiler) resolve(ref string) (*jnode, error) {
	doc, ptr, _ := strings.Cut(ref, "#")
	root := c.root
	if doc != "" {
		r, ok := c.refs[doc]
		if !ok {
			return nil, fmt.Errorf("%w: $ref %q names no schema reference", ErrUnsupported, ref)
		}
		root = r
	}
	n := root
	for _, part := range strings.Split(strings.Trim(ptr, "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		if n = n.get(part); n == nil {
			return nil, fmt.Errorf("%w: $ref %q points nowhere", ErrUnsupported, ref)
		}
	}
	return n, nil
}

func (c *jsonCompiler) types(n *jnode) []string {
	t := n.get("type")
	switch {
	case t == nil:
		switch {
		case n.get("properties") != nil:
			return []string{"object"}
		case n.get("items") != nil:
			return []string{"array"}
		case n.get("enum") != nil || n.get("const") != nil:
			return []string{"string"}
		}
		return nil
	case t.kind == 'a':
		var out []string
		for _, e := range t.arr {
			out = append(out, e.str())
		}
		return out
	}
	return []string{t.str()}
}

func (c *jsonCompiler) compile(n *jnode, path string) (*jsonType, error) {
	if n == nil || n.kind != 'o' {
		return nil, nil // true/false schemas and empty ones carry no type
	}
	if ref := n.get("$ref").str(); ref != "" {
		if c.depth[ref] >= MaxRecursion {
			return &jsonType{cut: ref}, nil
		}
		target, err := c.resolve(ref)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", path, err)
		}
		c.depth[ref]++
		defer func() { c.depth[ref]-- }()
		return c.compile(target, path)
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		if alts := n.get(key); alts != nil && alts.kind == 'a' {
			return c.union(alts.arr, path)
		}
	}
	if all := n.get("allOf"); all != nil && all.kind == 'a' && len(all.arr) == 1 {
		return c.compile(all.arr[0], path)
	}
	ts := c.types(n)
	var nonNull []string
	for _, t := range ts {
		if t != "null" {
			nonNull = append(nonNull, t)
		}
	}
	switch len(nonNull) {
	case 0:
		return nil, nil
	case 1:
		return c.single(n, nonNull[0], path)
	}
	var alts []*jnode
	for _, t := range nonNull {
		alt := &jnode{kind: 'o', obj: map[string]*jnode{}}
		for _, k := range n.keys {
			alt.keys, alt.obj[k] = append(alt.keys, k), n.obj[k]
		}
		alt.obj["type"] = &jnode{kind: 's', val: t}
		alts = append(alts, alt)
	}
	return c.union(alts, path)
}

// union: null branches make the field optional; one other branch is the
// field's type; several become a struct with one field per JSON kind
// (a value fills the branch of its kind).
func (c *jsonCompiler) union(alts []*jnode, path string) (*jsonType, error) {
	var typed []*jsonType
	var kinds []string
	for _, a := range alts {
		t, err := c.compile(a, path)
		if err != nil {
			return nil, err
		}
		if t == nil {
			continue // null
		}
		typed = append(typed, t)
		kinds = append(kinds, jsonKindOf(t))
	}
	switch len(typed) {
	case 0:
		return nil, nil
	case 1:
		return typed[0], nil
	}
	u := &jsonType{shape: &records.Shape{Kind: records.Struct}, branches: map[string]*jsonType{}}
	for i, t := range typed {
		if _, dup := u.branches[kinds[i]]; dup {
			return nil, fmt.Errorf("%w: field %s: union has two %s branches, which a JSON value cannot tell apart", ErrUnsupported, path, kinds[i])
		}
		u.branches[kinds[i]] = t
		u.shape.Fields = append(u.shape.Fields, &records.Field{Name: kinds[i], Shape: t.shape})
	}
	return u, nil
}

// jsonKindOf names the JSON kind a compiled type reads.
func jsonKindOf(t *jsonType) string {
	if t.cut != "" {
		return "object"
	}
	switch t.shape.Kind {
	case records.Bool:
		return "boolean"
	case records.Long:
		return "integer"
	case records.Double:
		return "number"
	case records.Struct, records.Map:
		return "object"
	case records.List:
		return "array"
	}
	return "string"
}

func (c *jsonCompiler) single(n *jnode, typ, path string) (*jsonType, error) {
	switch typ {
	case "boolean":
		return &jsonType{shape: prim(records.Bool)}, nil
	case "integer":
		return &jsonType{shape: prim(records.Long)}, nil
	case "number":
		return &jsonType{shape: prim(records.Double)}, nil
	case "string":
		f := n.get("format").str()
		switch {
		case f == "date":
			return &jsonType{shape: prim(records.Date), format: f}, nil
		case f == "date-time":
			return &jsonType{shape: prim(records.TimestampTz), format: f}, nil
		case f == "time":
			return &jsonType{shape: prim(records.Time), format: f}, nil
		case f == "uuid":
			return &jsonType{shape: prim(records.UUID), format: f}, nil
		case n.get("contentEncoding").str() == "base64":
			return &jsonType{shape: prim(records.Bytes), format: "base64"}, nil
		}
		return &jsonType{shape: prim(records.String)}, nil
	case "array":
		e, err := c.compile(n.get("items"), path+"[]")
		if err != nil {
			return nil, err
		}
		if e == nil {
			return nil, fmt.Errorf("%w: field %s: array items have no type", ErrUnsupported, path)
		}
		if e.cut != "" {
			return &jsonType{cut: e.cut}, nil
		}
		return &jsonType{shape: &records.Shape{Kind: records.List, Elem: e.shape}, elem: e}, nil
	case "object":
		props := n.get("properties")
		if props == nil || len(props.keys) == 0 {
			if ap := n.get("additionalProperties"); ap != nil && ap.kind == 'o' {
				v, err := c.compile(ap, path+"{}")
				if err != nil {
					return nil, err
				}
				if v != nil && v.cut == "" {
					return &jsonType{shape: &records.Shape{Kind: records.Map, Key: prim(records.String), Elem: v.shape}, elem: v}, nil
				}
			}
			return nil, nil // no properties: no column
		}
		t := &jsonType{shape: &records.Shape{Kind: records.Struct}, fields: map[string]*jsonType{}}
		for _, k := range props.keys {
			ft, err := c.compile(props.obj[k], joinPath(path, k))
			if err != nil {
				return nil, err
			}
			if ft == nil {
				continue
			}
			t.fields[k] = ft
			if ft.cut == "" {
				t.shape.Fields = append(t.shape.Fields, &records.Field{Name: k, Shape: ft.shape})
			}
		}
		if len(t.shape.Fields) == 0 {
			return nil, nil
		}
		return t, nil
	}
	return nil, fmt.Errorf("%w: field %s: JSON Schema type %q", ErrUnsupported, path, typ)
}

// decodeJSONSchema parses a JSON record and converts it to values of t.
func decodeJSONSchema(t *jsonType, data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("invalid JSON: trailing data after the value")
	}
	if t.format == "wrap" {
		v = map[string]any{"value": v}
	}
	out, err := jsonValue(t, v, "")
	if err != nil {
		return nil, err
	}
	m, ok := out.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("value is not a JSON object")
	}
	return m, nil
}

func jsonValue(t *jsonType, v any, path string) (any, error) {
	if v == nil {
		return nil, nil
	}
	if t.cut != "" {
		return nil, fmt.Errorf("field %s: recursive $ref %s nests deeper than %d levels, Floe's limit", path, t.cut, MaxRecursion)
	}
	bad := func(want string) error {
		return fmt.Errorf("field %s: schema says %s, value is %s", path, want, describeJSON(v))
	}
	if t.branches != nil {
		kind := jsonKindOfValue(v)
		b, ok := t.branches[kind]
		if !ok && kind == "integer" {
			kind, b, ok = "number", t.branches["number"], t.branches["number"] != nil
		}
		if !ok {
			return nil, bad("one of the union's types")
		}
		bv, err := jsonValue(b, v, joinPath(path, kind))
		if err != nil {
			return nil, err
		}
		return map[string]any{kind: bv}, nil
	}
	switch t.shape.Kind {
	case records.Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, bad("boolean")
		}
		return b, nil
	case records.Long:
		n, ok := v.(json.Number)
		if !ok {
			return nil, bad("integer")
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			// 1.0 is an integer in JSON Schema.
			f, ferr := n.Float64()
			if ferr != nil || f != float64(int64(f)) {
				return nil, bad("integer")
			}
			i = int64(f)
		}
		return i, nil
	case records.Double:
		n, ok := v.(json.Number)
		if !ok {
			return nil, bad("number")
		}
		f, err := n.Float64()
		if err != nil {
			return nil, bad("number")
		}
		return f, nil
	case records.List:
		xs, ok := v.([]any)
		if !ok {
			return nil, bad("array")
		}
		out := make([]any, len(xs))
		for i, x := range xs {
			e, err := jsonValue(t.elem, x, path+"[]")
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case records.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad("object")
		}
		out := make([]records.MapEntry, 0, len(m))
		for k, x := range m {
			e, err := jsonValue(t.elem, x, path+"{}")
			if err != nil {
				return nil, err
			}
			out = append(out, records.MapEntry{Key: k, Value: e})
		}
		return out, nil
	case records.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad("object")
		}
		out := make(map[string]any, len(t.fields))
		for k, x := range m {
			ft, ok := t.fields[k]
			if !ok {
				continue // additional properties have no column
			}
			e, err := jsonValue(ft, x, joinPath(path, k))
			if err != nil {
				return nil, err
			}
			if e != nil {
				out[k] = e
			}
		}
		return out, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, bad("string")
	}
	return jsonString(t, s, path)
}

func jsonString(t *jsonType, s, path string) (any, error) {
	switch t.format {
	case "date":
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return nil, fmt.Errorf("field %s: %q is not a date (YYYY-MM-DD)", path, s)
		}
		return records.Days(d.Unix() / 86400), nil
	case "date-time":
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, fmt.Errorf("field %s: %q is not an RFC 3339 date-time", path, s)
		}
		return ts.UTC(), nil
	case "time":
		clock, _, _ := strings.Cut(strings.TrimSuffix(s, "Z"), "+")
		tm, err := time.Parse("15:04:05.999999999", clock)
		if err != nil {
			return nil, fmt.Errorf("field %s: %q is not a time (HH:MM:SS)", path, s)
		}
		return tm.Sub(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)).Truncate(time.Microsecond), nil
	case "uuid":
		u, err := uuid.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("field %s: %q is not a UUID", path, s)
		}
		return [16]byte(u), nil
	case "base64":
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("field %s: not base64: %v", path, err)
		}
		return b, nil
	}
	return s, nil
}

func jsonKindOfValue(v any) string {
	switch x := v.(type) {
	case bool:
		return "boolean"
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

func describeJSON(v any) string {
	k := jsonKindOfValue(v)
	if k == "array" || k == "object" || k == "integer" {
		return "an " + k
	}
	return "a " + k
}
