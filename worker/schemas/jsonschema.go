package schemas

import (
	"fmt"
	"strings"

	"github.com/floe-io/floe/internal/records"
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
