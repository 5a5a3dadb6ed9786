package delta

import (
	"encoding/json"
	"fmt"
)

// A map in a commit file is a JSON object; the same map read back from a
// Parquet checkpoint through arrow's JSON form is a list of {key, value}
// pairs. The two map types accept both and always write the object.

// StringMap is a map<string,string> of the protocol (options, configuration,
// tags).
type StringMap map[string]string

// NullableMap is a map<string,string> whose values may be null (partition
// values: a null partition value).
type NullableMap map[string]*string

type kv[V any] struct {
	Key   *string `json:"key"`
	Value V       `json:"value"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *StringMap) UnmarshalJSON(b []byte) error {
	out, err := unmarshalMap[string](b)
	*m = out
	return err
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *NullableMap) UnmarshalJSON(b []byte) error {
	out, err := unmarshalMap[*string](b)
	*m = out
	return err
}

func unmarshalMap[V any](b []byte) (map[string]V, error) {
	var obj map[string]V
	if err := json.Unmarshal(b, &obj); err == nil {
		return obj, nil
	}
	var pairs []kv[V]
	if err := json.Unmarshal(b, &pairs); err != nil {
		return nil, fmt.Errorf("a map is neither an object nor a list of key/value pairs: %w", err)
	}
	if pairs == nil {
		return nil, nil
	}
	out := make(map[string]V, len(pairs))
	for _, p := range pairs {
		if p.Key == nil {
			return nil, fmt.Errorf("a map pair without a key")
		}
		out[*p.Key] = p.Value
	}
	return out, nil
}

// pairs renders a map as arrow's JSON form of a map column, in key order
// so checkpoints are reproducible.
func pairs[V any](m map[string]V) []kv[V] {
	if m == nil {
		return nil
	}
	keys := sortedKeys(m)
	out := make([]kv[V], 0, len(keys))
	for _, k := range keys {
		out = append(out, kv[V]{Key: &k, Value: m[k]})
	}
	return out
}

// MarshalJSON implements json.Marshaler: a nil map is {}, as the protocol's
// required maps (format options, configuration) must be present.
func (m StringMap) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(map[string]string(m))
}
