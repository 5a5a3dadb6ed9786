package ingest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/records"
)

func TestDecodeJSON(t *testing.T) {
	cases := []struct {
		name    string
		records []string
		shape   string   // after all records
		bad     []string // error substrings per record ("" = accepted)
	}{
		{"infers types", []string{`{"i":1,"f":1.5,"s":"x","b":true,"n":null,"o":{"a":1},"l":[1,2]}`},
			"struct<i: long, f: double, s: string, b: boolean, o: struct<a: long>, l: list<long>>", []string{""}},
		{"new field adds column", []string{`{"a":1}`, `{"a":2,"b":"x"}`}, "struct<a: long, b: string>", []string{"", ""}},
		{"uncommitted long widens", []string{`{"a":1}`, `{"a":1.5}`}, "struct<a: double>", []string{"", ""}},
		{"mixed list widens", []string{`{"l":[1,2.5]}`}, "struct<l: list<double>>", []string{""}},
		{"type conflict", []string{`{"a":1}`, `{"a":"x"}`}, "struct<a: long>", []string{"", "field a: column is long, value is a string"}},
		{"not an object", []string{`[1,2]`}, "struct<>", []string{"not a JSON object"}},
		{"invalid", []string{`{"a":`}, "struct<>", []string{"invalid JSON"}},
		{"trailing", []string{`{"a":1} {"b":2}`}, "struct<>", []string{"trailing data"}},
		{"metadata collision", []string{`{"_kafka_offset":1}`}, "struct<>", []string{"collides"}},
		{"mixed array", []string{`{"l":[1,"x"]}`}, "struct<>", []string{"array mixes"}},
		{"rejected record leaves shape", []string{`{"a":1}`, `{"b":1,"a":"x"}`}, "struct<a: long>", []string{"", "field a"}},
		{"nested conflict named", []string{`{"o":{"p":{"q":true}}}`, `{"o":{"p":{"q":3}}}`}, "struct<o: struct<p: struct<q: boolean>>>", []string{"", "field o.p.q"}},
		{"null and empty skipped", []string{`{"a":null,"b":[],"c":{}}`}, "struct<>", []string{""}},
		{"nested fields in first-seen order", []string{`{"o":{"z":1,"a":2,"m":{"y":1,"b":2}}}`, `{"o":{"c":1,"z":2}}`},
			"struct<o: struct<z: long, a: long, m: struct<y: long, b: long>, c: long>>", []string{"", ""}},
		{"list elements' fields in first-seen order", []string{`{"l":[{"b":1},{"a":2,"b":3,"c":{"y":1,"x":2}}]}`},
			"struct<l: list<struct<b: long, a: long, c: struct<y: long, x: long>>>>", []string{""}},
		{"huge integer is double", []string{`{"a":123456789012345678901234}`}, "struct<a: double>", []string{""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			shape := &records.Shape{Kind: records.Struct}
			for i, r := range c.records {
				_, err := decodeJSON(shape, []byte(r))
				switch {
				case c.bad[i] == "" && err != nil:
					t.Fatalf("record %d: %v", i, err)
				case c.bad[i] != "" && (err == nil || !strings.Contains(err.Error(), c.bad[i]) || !errors.Is(err, records.ErrBadRecord)):
					t.Fatalf("record %d: err %v, want %q", i, err, c.bad[i])
				}
			}
			if got := shape.String(); got != c.shape {
				t.Fatalf("shape %s, want %s", got, c.shape)
			}
		})
	}
}

func TestCommittedColumnsDoNotWiden(t *testing.T) {
	shape := &records.Shape{Kind: records.Struct}
	if _, err := decodeJSON(shape, []byte(`{"a":1,"l":[1]}`)); err != nil {
		t.Fatal(err)
	}
	shape.MarkCommitted()
	for _, r := range []string{`{"a":1.5}`, `{"l":[2.5]}`} {
		if _, err := decodeJSON(shape, []byte(r)); err == nil || !strings.Contains(err.Error(), "has a fraction") {
			t.Fatalf("%s into committed long: %v", r, err)
		}
	}
	// New nested fields under committed structs are still fine.
	if _, err := decodeJSON(shape, []byte(`{"a":2,"x":{"y":"z"}}`)); err != nil {
		t.Fatal(err)
	}
	if !shape.HasUncommitted() {
		t.Fatal("new field not pending")
	}
}

func TestDecodedValuesAreNormalized(t *testing.T) {
	shape := &records.Shape{Kind: records.Struct}
	v, err := decodeJSON(shape, []byte(`{"i":7,"f":2.5,"l":[{"k":1}],"n":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v["i"].(int64); !ok {
		t.Fatalf("i is %T", v["i"])
	}
	if _, ok := v["f"].(float64); !ok {
		t.Fatalf("f is %T", v["f"])
	}
	if _, ok := v["n"]; ok {
		t.Fatal("null kept")
	}
	inner := v["l"].([]any)[0].(map[string]any)
	if _, ok := inner["k"].(int64); !ok {
		t.Fatalf("l[].k is %T", inner["k"])
	}
}

func TestParserEdgeCases(t *testing.T) {
	cases := []struct {
		in   string
		want string // fmt of decoded value, or error substring prefixed with "!"
	}{
		{`{"s":"a\"b\\c\u00e9\n"}`, "map[s:a\"b\\cé\n]"},
		{` { "a" : 1 , "b" : [ ] } `, "map[a:1]"},
		{`{"a":1,"a":2}`, "map[a:2]"},
		{`{"a":-1.5e3}`, "map[a:-1500]"},
		{`{"a":01}`, "!invalid JSON in field a"},
		{`{"a":1,}`, "!expected a field name"},
		{`{"a" 1}`, "!expected :"},
		{`{"a":tru}`, "!invalid JSON in field a"},
		{`{"a":"x`, "!unterminated string"},
		{`{"a":[1,2}`, "!invalid JSON in field a"},
		{`{"a":1}`, "map[a:1]"},
		{`"just a string"`, "!value is a string, not a JSON object"},
		{`42`, "!value is an integer, not a JSON object"},
		{`nul`, "!invalid JSON"},
		{"{\"a\":\"\x01\"}", "!control character"},
	}
	for _, c := range cases {
		shape := &records.Shape{Kind: records.Struct}
		v, err := decodeJSON(shape, []byte(c.in))
		if strings.HasPrefix(c.want, "!") {
			if err == nil || !strings.Contains(err.Error(), c.want[1:]) {
				t.Errorf("%s: err %v, want %q", c.in, err, c.want[1:])
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got := fmt.Sprint(v); got != c.want {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
}

// TestParserOnKnownShape exercises the fast path (fields already known),
// where the new parser does the work without encoding/json.
func TestParserOnKnownShape(t *testing.T) {
	shape := &records.Shape{Kind: records.Struct}
	if _, err := decodeJSON(shape, []byte(`{"a":1,"l":[true],"o":{"s":"x"}}`)); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		`{"a":01}`:                   "bad number",
		`{"l":[tru]}`:                "expected true",
		`{"l":[true,false}`:          "expected , or ]",
		`{"o":{"s":"x"`:              "unterminated object",
		`{"a":"str"}`:                "field a: column is long, value is a string",
		`{"o":{"s":5}}`:              "field o.s: column is string, value is an integer",
		`{"l":{"x":1}}`:              "field l: column is list<boolean>, value is an object",
		`{"a":99999999999999999999}`: "does not fit a long",
	} {
		if _, err := decodeJSON(shape, []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", in, err, want)
		}
	}
}

func TestValidNumber(t *testing.T) {
	for _, n := range []string{"0", "-0", "1", "-12", "1.5", "0.25", "1e5", "1E-5", "-2.5e+10"} {
		if !validNumber([]byte(n)) {
			t.Errorf("%s refused", n)
		}
	}
	for _, n := range []string{"", "-", "01", "1.", ".5", "1e", "1e+", "--1", "1-", "+1", "0x1"} {
		if validNumber([]byte(n)) {
			t.Errorf("%s accepted", n)
		}
	}
}
