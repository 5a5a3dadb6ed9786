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

	"github.com/floe-io/floe/internal/records"
)

// decodeJSONSchema parses a JSON record and converts it to values of t.
func decodeJSONSchema(t *jsonType, data []byte) (map[string]any, error) {
	// Refused before decoding: encoding/json would build every level (up
	// to 10,000) of a value whose extra depth the schema then drops.
	if jsonDeeperThan(data, hardLimits.MaxDepth) {
		return nil, fmt.Errorf("%w: value nests deeper than %d levels", records.ErrLimit, hardLimits.MaxDepth)
	}
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

// jsonValue converts a decoded JSON value to the Go value of its schema
// type t; path names the field in errors.
func jsonValue(t *jsonType, v any, path string) (any, error) {
	if v == nil {
		return nil, nil
	}
	if t.cut != "" {
		return nil, fmt.Errorf("field %s: recursive $ref %s nests deeper than %d levels, Floe's limit", path, t.cut, MaxRecursion)
	}
	if t.branches != nil {
		return jsonUnion(t, v, path)
	}
	switch t.shape.Kind {
	case records.Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, jsonMismatch(path, "boolean", v)
		}
		return b, nil
	case records.Long:
		return jsonInteger(v, path)
	case records.Double:
		n, ok := v.(json.Number)
		if !ok {
			return nil, jsonMismatch(path, "number", v)
		}
		f, err := n.Float64()
		if err != nil {
			return nil, jsonMismatch(path, "number", v)
		}
		return f, nil
	case records.List:
		return jsonList(t, v, path)
	case records.Map:
		return jsonMap(t, v, path)
	case records.Struct:
		return jsonStruct(t, v, path)
	}
	s, ok := v.(string)
	if !ok {
		return nil, jsonMismatch(path, "string", v)
	}
	return jsonString(t, s, path)
}

// jsonMismatch says a value is not what the schema says.
func jsonMismatch(path, want string, v any) error {
	return fmt.Errorf("field %s: schema says %s, value is %s", path, want, describeJSON(v))
}

// jsonUnion converts a value of a union of types to a one-field struct
// named by the branch its JSON type picks (an integer may take the number
// branch).
func jsonUnion(t *jsonType, v any, path string) (any, error) {
	kind := jsonKindOfValue(v)
	b, ok := t.branches[kind]
	if !ok && kind == "integer" {
		kind, b, ok = "number", t.branches["number"], t.branches["number"] != nil
	}
	if !ok {
		return nil, jsonMismatch(path, "one of the union's types", v)
	}
	bv, err := jsonValue(b, v, joinPath(path, kind))
	if err != nil {
		return nil, err
	}
	return map[string]any{kind: bv}, nil
}

func jsonInteger(v any, path string) (any, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, jsonMismatch(path, "integer", v)
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		// 1.0 is an integer in JSON Schema.
		f, ferr := n.Float64()
		if ferr != nil || f != float64(int64(f)) {
			return nil, jsonMismatch(path, "integer", v)
		}
		i = int64(f)
	}
	return i, nil
}

func jsonList(t *jsonType, v any, path string) (any, error) {
	xs, ok := v.([]any)
	if !ok {
		return nil, jsonMismatch(path, "array", v)
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
}

func jsonMap(t *jsonType, v any, path string) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, jsonMismatch(path, "object", v)
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
}

// jsonStruct converts an object's properties that have columns; nulls are
// left out.
func jsonStruct(t *jsonType, v any, path string) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, jsonMismatch(path, "object", v)
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

// jsonDeeperThan reports whether the JSON text nests objects and arrays
// deeper than max, counting brackets outside strings (a cheap pre-scan;
// the text's validity is checked by the decoder).
func jsonDeeperThan(data []byte, max int) bool {
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if depth++; depth > max {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}
