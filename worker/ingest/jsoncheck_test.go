package ingest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/records"
)

// checkShape is the columns FuzzFitsJSON and TestFitsJSON check against:
// every JSON kind, nested, with a long column not yet committed (a
// fraction widens it) and committed ones (a fraction is refused).
func checkShape(t testing.TB) *records.Shape {
	shape := &records.Shape{Kind: records.Struct}
	if _, err := decodeJSON(shape, []byte(`{"id":1,"s":"x","b":true,"d":1.5,"o":{"n":2,"l":[{"k":"v"}]},"ls":[1,2]}`)); err != nil {
		t.Fatal(err)
	}
	shape.MarkCommitted()
	if _, err := decodeJSON(shape, []byte(`{"late":3}`)); err != nil {
		t.Fatal(err)
	}
	return shape
}

func TestFitsJSON(t *testing.T) {
	lim := records.Limits{MaxDepth: 4}.WithDefaults()
	for _, tc := range []struct {
		doc  string
		fits bool
	}{
		{`{"id":1,"s":"x","b":true,"d":1.5,"o":{"n":2,"l":[{"k":"v"}]},"ls":[1,2],"late":4}`, true},
		{` { } `, true},
		{`{"id":null,"o":null,"ls":[null,3],"d":7}`, true},
		{`{"s":"tab\there \u00e9 \"q\" \\ \/"}`, true},
		{"{\"s\":\"bad \xff utf-8 is replaced, not refused\"}", true},
		{`{"id":-9223372036854775808,"d":1e308,"o":{"l":[]}}`, true},
		{`{"d":` + strings.Repeat("9", 290) + `}`, true},
		{`{"d":` + strings.Repeat("9", 320) + `}`, false}, // past float64
		{`{"d":1e400}`, false},                            // out of float64's range
		{`{"id":9223372036854775808}`, false},             // out of int64's range
		{`{"id":1.5}`, false},                             // a fraction in a committed long
		{`{"late":1.5}`, false},                           // widens a column
		{`{"new":1}`, false},                              // adds a column
		{`{"o":{"new":1}}`, false},                        // adds a nested column
		{`{"id":1,"id":2}`, false},                        // a repeated key
		{`{"o":{"n":1,"n":null}}`, false},                 // a repeated nested key
		{`{"i\u0064":1}`, false},                          // an escaped key
		{`{"s":1}`, false},                                // a number in a string column
		{`{"o":[1]}`, false},                              // a list in a struct column
		{`{"s":"bad \x escape"}`, false},                  // not JSON
		{`{"s":"\u12"}`, false},                           // a short \u escape
		{"{\"s\":\"a\nb\"}", false},                       // a raw control character
		{`{"id":01}`, false},                              // a leading zero
		{`{"id":1,}`, false},                              // a trailing comma
		{`{"id":1} x`, false},                             // trailing data
		{`[1]`, false},                                    // not an object
		{``, false},                                       // empty
		{`{"o":{"l":[{"k":{"deep":1}}]}}`, false},         // a struct in a string column
		{`{"_kafka_offset":1}`, false},                    // a metadata name
	} {
		shape := checkShape(t)
		before := shape.String()
		got := fitsJSON(shape, []byte(tc.doc), lim)
		if got != tc.fits {
			t.Errorf("fitsJSON(%s) = %v, want %v", tc.doc, got, tc.fits)
		}
		if shape.String() != before {
			t.Errorf("fitsJSON(%s) changed the shape to %s", tc.doc, shape)
		}
		if got {
			if _, ok := decodeJSONFits(shape, []byte(tc.doc), lim); !ok {
				t.Errorf("fitsJSON accepted %s, which decodeJSONFits refuses", tc.doc)
			}
		}
	}
}

func TestFitsJSONDepth(t *testing.T) {
	shape := &records.Shape{Kind: records.Struct}
	doc := []byte(`{"a":{"b":{"c":{"d":1}}}}`)
	if _, err := decodeJSON(shape, doc); err != nil {
		t.Fatal(err)
	}
	for depth, want := range map[int]bool{3: false, 4: true} {
		lim := records.Limits{MaxDepth: depth}.WithDefaults()
		_, decoded := decodeJSONFits(shape, doc, lim)
		if got := fitsJSON(shape, doc, lim); got != want || decoded != want {
			t.Errorf("max depth %d: fitsJSON %v, decodeJSONFits %v, want %v", depth, got, decoded, want)
		}
	}
}

// FuzzFitsJSON holds the fetcher's check to the decoder: whatever it
// accepts, decoding against the same columns accepts without changing
// them, and it never changes the columns itself.
func FuzzFitsJSON(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"s":"x","b":true,"d":1.5,"o":{"n":2,"l":[{"k":"v"}]},"ls":[1,2],"late":4}`,
		`{"id":null,"d":-0.0e+1,"s":"\ud800\n"}`,
		`{"late":2.5,"o":{}}`,
		`{"id":1,"id":2}`,
		"{\"s\":\"\xff\"}",
		`{"ls":[1,[2]]}`,
		fmt.Sprintf(`{"d":%s}`, strings.Repeat("1", 400)),
	} {
		f.Add([]byte(s))
	}
	lim := records.Limits{MaxDepth: 4, MaxColumns: 40}.WithDefaults()
	f.Fuzz(func(t *testing.T, doc []byte) {
		shape := checkShape(t)
		before := shape.String()
		if !fitsJSON(shape, doc, lim) {
			return
		}
		if shape.String() != before {
			t.Fatalf("fitsJSON(%q) changed the shape to %s", doc, shape)
		}
		if _, ok := decodeJSONFits(shape, doc, lim); !ok {
			t.Fatalf("fitsJSON accepted %q, which decodeJSONFits refuses", doc)
		}
	})
}

func BenchmarkFitsJSON(b *testing.B) {
	v := []byte(fmt.Sprintf(`{"order_id":%d,"customer_id":"cust-%08d","status":"paid","amount":12.34,"currency":"EUR","items":[{"sku":"sku-000001","qty":2,"price":9.99},{"sku":"sku-000002","qty":1,"price":3.49}],"shipping":{"name":"Customer 1","street":"1 Long Street Name","city":"Berlin","zip":"10115","country":"DE","express":true},"created_at":"2026-11-29T12:00:00.000Z","note":"%s"}`, 1, 1, strings.Repeat("x", 70)))
	shape := &records.Shape{Kind: records.Struct}
	if _, err := decodeJSON(shape, v); err != nil {
		b.Fatal(err)
	}
	shape.MarkCommitted()
	lim := records.Limits{}.WithDefaults()
	b.SetBytes(int64(len(v)))
	b.ReportAllocs()
	var c checker
	for b.Loop() {
		if !c.fits(shape, v, lim) {
			b.Fatal("does not fit")
		}
	}
}
