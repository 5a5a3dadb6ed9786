package ingest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/floe-io/floe/internal/records"
)

// TestKnownKeysAnyOrder: the byte-wise lookup of known names (jsonkeys.go)
// finds every field whatever the order, an escaped spelling of a known
// name is that field, and a new key between known ones is added; each
// record decodes to what encoding/json reads.
func TestKnownKeysAnyOrder(t *testing.T) {
	for _, c := range []struct{ name, doc string }{
		{"schema order", `{"a":1,"b":"x","c":{"d":true}}`},
		{"reversed", `{"c":{"d":false},"b":"y","a":2}`},
		{"escaped known name", `{"\u0061":3,"b":"z"}`},
		{"new key in between", `{"a":4,"new_one":"n","b":"w"}`},
		{"a key twice", `{"a":5,"a":6}`},
		{"prefix of a name", `{"ab":7,"a":8}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			shape := &records.Shape{Kind: records.Struct}
			if _, err := decodeJSON(shape, []byte(`{"a":0,"b":"s","c":{"d":true}}`)); err != nil {
				t.Fatal(err)
			}
			shape.MarkCommitted()
			got, err := decodeJSON(shape, []byte(c.doc))
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(c.doc), &want); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("decoded %v, encoding/json %v", got, want)
			}
			for k := range want {
				if _, ok := got[k]; !ok || shape.Lookup(k) == nil {
					t.Fatalf("key %q: decoded %v, shape %s", k, got, shape)
				}
			}
			if !reflect.DeepEqual(keys(got), keys(want)) {
				t.Fatalf("keys %v, want %v", keys(got), keys(want))
			}
		})
	}
}

func keys(m map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}
