package ingest

import (
	"errors"
	"testing"

	"github.com/floe-io/floe/internal/records"
)

// FuzzDecodeJSON parses and infers arbitrary documents into a table that
// already has columns: it must not panic; an accepted record leaves a
// shape within the limits (depth, columns, names); a refused one leaves
// the shape as it was.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"order_id":1,"x":{"inner":true},"l":[1,2.5],"s":"t"}`,
		`{"a":{"b":{"c":[{"d":null}]}}}`,
		`{"A":1,"a":2}`,
		`{"a\u0000b":1}`,
		`{"ORDER_ID":2}`,
		`{"n":-0.0e+1,"big":123456789012345678901234567890}`,
		`{"e":"\ud800\n","k\u00e9":[[],[[1]]],"o":{}}`,
		string(nested(40)),
		"{\"bad\xff\":1}",
		`[1]`,
		`{"x":{"inner":1.5}}`,
	} {
		f.Add([]byte(s))
	}
	lim := records.Limits{MaxDepth: 8, MaxColumns: 40}
	f.Fuzz(func(t *testing.T, doc []byte) {
		shape := &records.Shape{Kind: records.Struct}
		if _, err := decodeJSON(shape, []byte(`{"order_id":1,"x":{"inner":true}}`)); err != nil {
			t.Fatal(err)
		}
		shape.MarkCommitted()
		before := shape.String()
		_, err := decodeJSONWith(shape, doc, lim)
		switch {
		case err != nil && !errors.Is(err, records.ErrBadRecord):
			t.Fatalf("error outside ErrBadRecord: %v", err)
		case err != nil && shape.String() != before:
			t.Fatalf("refused (%v) but the shape changed to %s", err, shape)
		case err == nil:
			if cerr := lim.Check(shape, 0, ""); cerr != nil {
				t.Fatalf("accepted %q into a shape past the limits: %v", doc, cerr)
			}
		}
	})
}
