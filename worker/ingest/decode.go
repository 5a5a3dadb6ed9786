package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/floe-io/floe/internal/records"
)

// DecodeJSON is decodeJSON for benchmarks and tools outside the package.
func DecodeJSON(shape *records.Shape, data []byte) (map[string]any, error) {
	return decodeJSON(shape, data)
}

func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		if isIntegral(x) {
			return "an integer"
		}
		return "a fractional number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

func isIntegral(n json.Number) bool { return !strings.ContainsAny(string(n), ".eE") }

func fieldPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func mismatch(path string, want *records.Shape, v any) error {
	return fmt.Errorf("%w: field %s: column is %s, value is %s", records.ErrBadRecord, path, want, jsonKind(v))
}

// conform checks (apply=false) or normalizes (apply=true) v against s.
// frozen is true below a committed field. With apply=false nothing changes.
func conform(s *records.Shape, v any, frozen bool, path string, apply bool) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch x := v.(type) {
	case bool:
		if s.Kind != records.Bool {
			return nil, mismatch(path, s, v)
		}
		return x, nil
	case string:
		if s.Kind != records.String {
			return nil, mismatch(path, s, v)
		}
		return x, nil
	case json.Number:
		return conformNumber(s, x, frozen, path, apply)
	case []any:
		if s.Kind != records.List {
			return nil, mismatch(path, s, v)
		}
		out := make([]any, len(x))
		for i, e := range x {
			n, err := conform(s.Elem, e, frozen, path+"[]", apply)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case map[string]any:
		if s.Kind != records.Struct {
			return nil, mismatch(path, s, v)
		}
		out := make(map[string]any, len(x))
		// Sorted so that fields first seen together are added to the table
		// in a deterministic order.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			val := x[k]
			p := fieldPath(path, k)
			f := s.Lookup(k)
			if f == nil {
				// A new field is allowed even under a committed struct:
				// Iceberg adds it as an optional column.
				ns, err := infer(val, p)
				if err != nil {
					return nil, err
				}
				if ns == nil {
					continue // null or empty: no type to add yet
				}
				f = &records.Field{Name: k, Shape: ns}
				if apply {
					s.Fields = append(s.Fields, f)
				}
			}
			n, err := conform(f.Shape, val, frozen || f.Committed, p, apply)
			if err != nil {
				return nil, err
			}
			if n != nil {
				out[k] = n
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: field %s: unsupported JSON value %T", records.ErrBadRecord, path, v)
}

func conformNumber(s *records.Shape, n json.Number, frozen bool, path string, apply bool) (any, error) {
	if isIntegral(n) {
		i, err := strconv.ParseInt(string(n), 10, 64)
		switch {
		case err == nil && s.Kind == records.Long:
			return i, nil
		case s.Kind == records.Double:
			f, ferr := n.Float64()
			if ferr != nil {
				return nil, fmt.Errorf("%w: field %s: %v", records.ErrBadRecord, path, ferr)
			}
			return f, nil
		case err != nil && s.Kind == records.Long:
			return nil, fmt.Errorf("%w: field %s: %s does not fit a long", records.ErrBadRecord, path, n)
		}
		return nil, mismatch(path, s, n)
	}
	f, err := n.Float64()
	if err != nil {
		return nil, fmt.Errorf("%w: field %s: %v", records.ErrBadRecord, path, err)
	}
	switch {
	case s.Kind == records.Double:
		return f, nil
	case s.Kind == records.Long && !frozen:
		if apply {
			s.Kind = records.Double // not yet in the table: widen
		}
		return f, nil
	case s.Kind == records.Long:
		return nil, fmt.Errorf("%w: field %s: column is long, value %s has a fraction", records.ErrBadRecord, path, n)
	}
	return nil, mismatch(path, s, n)
}

// infer returns the shape of a value never seen before, nil when it carries
// no type (null, empty array or object).
func infer(v any, path string) (*records.Shape, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return &records.Shape{Kind: records.Bool}, nil
	case string:
		return &records.Shape{Kind: records.String}, nil
	case json.Number:
		if isIntegral(x) {
			if _, err := strconv.ParseInt(string(x), 10, 64); err != nil {
				return &records.Shape{Kind: records.Double}, nil
			}
			return &records.Shape{Kind: records.Long}, nil
		}
		return &records.Shape{Kind: records.Double}, nil
	case []any:
		var elem *records.Shape
		for _, e := range x {
			es, err := infer(e, path+"[]")
			if err != nil {
				return nil, err
			}
			if elem, err = merge(elem, es, path+"[]"); err != nil {
				return nil, err
			}
		}
		if elem == nil {
			return nil, nil
		}
		return &records.Shape{Kind: records.List, Elem: elem}, nil
	case map[string]any:
		s := &records.Shape{Kind: records.Struct}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			fs, err := infer(x[k], fieldPath(path, k))
			if err != nil {
				return nil, err
			}
			if fs != nil {
				s.Fields = append(s.Fields, &records.Field{Name: k, Shape: fs})
			}
		}
		if len(s.Fields) == 0 {
			return nil, nil
		}
		return s, nil
	}
	return nil, fmt.Errorf("%w: field %s: unsupported JSON value %T", records.ErrBadRecord, path, v)
}

// merge unifies two inferred shapes of the same position.
func merge(a, b *records.Shape, path string) (*records.Shape, error) {
	switch {
	case a == nil:
		return b, nil
	case b == nil:
		return a, nil
	case a.Kind == b.Kind && a.Kind == records.Struct:
		for _, bf := range b.Fields {
			af := a.Lookup(bf.Name)
			if af == nil {
				a.Fields = append(a.Fields, bf)
				continue
			}
			m, err := merge(af.Shape, bf.Shape, fieldPath(path, bf.Name))
			if err != nil {
				return nil, err
			}
			af.Shape = m
		}
		return a, nil
	case a.Kind == b.Kind && a.Kind == records.List:
		m, err := merge(a.Elem, b.Elem, path+"[]")
		if err != nil {
			return nil, err
		}
		a.Elem = m
		return a, nil
	case a.Kind == b.Kind:
		return a, nil
	case (a.Kind == records.Long && b.Kind == records.Double) || (a.Kind == records.Double && b.Kind == records.Long):
		return &records.Shape{Kind: records.Double}, nil
	}
	return nil, fmt.Errorf("%w: field %s: array mixes %s and %s", records.ErrBadRecord, path, a, b)
}

// validNumber checks the JSON number grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}
