package ingest

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/testing/rss"
)

// nested is a JSON object nesting depth objects deep: {"a":{"a":...1}}.
func nested(depth int) []byte {
	return []byte(strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth))
}

func manyKeys(n int) []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// committedShape is a table that already has order_id and a struct x with
// field inner, committed.
func committedShape(t *testing.T) *records.Shape {
	s := &records.Shape{Kind: records.Struct}
	if _, err := decodeJSON(s, []byte(`{"order_id":1,"x":{"inner":true}}`)); err != nil {
		t.Fatal(err)
	}
	s.MarkCommitted()
	return s
}

// TestJSONLimits: records past the table's nesting depth or column count,
// or adding a column whose name is bad or collides ignoring case, are bad
// records (records.ErrLimit) naming the field, and leave the shape as it
// was; records within the limits pass.
func TestJSONLimits(t *testing.T) {
	def := records.Limits{}.WithDefaults()
	cases := []struct {
		name string
		in   []byte
		lim  records.Limits
		want string // "" accepted
	}{
		{"10,000 levels", nested(10000), def, "nests deeper than max_nesting_depth 64"},
		{"65 levels", nested(65), def, "max_nesting_depth 64"},
		{"64 levels", nested(64), def, ""},
		{"deep array", []byte(`{"l":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`), def, "field l nests deeper"},
		{"5,000 keys", manyKeys(5000), def, "max_columns 1000"},
		{"997 keys fit beside 3 columns", manyKeys(997), def, ""},
		{"998 keys do not", manyKeys(998), def, "max_columns 1000"},
		{"nested columns count", []byte(`{"s":{"a":1,"b":2,"c":3}}`), records.Limits{MaxDepth: 8, MaxColumns: 6}, "max_columns 6"},
		{"A and a in one record", []byte(`{"A":1,"a":2}`), def, `field "a" collides with column "A"`},
		{"ORDER_ID beside order_id", []byte(`{"ORDER_ID":2}`), def, `field "ORDER_ID" collides with column "order_id"`},
		{"nested collision with a column", []byte(`{"x":{"INNER":false}}`), def, `field "x.INNER" collides with column "inner"`},
		{"collision inside a new struct", []byte(`{"y":{"B":1,"b":2}}`), def, "field y.b: collides with field y.B"},
		{"NUL in a name", []byte(`{"a\u0000b":1}`), def, `field "a\x00b": bad column name`},
		{"NUL in a nested new name", []byte(`{"y":{"a\u0000":1}}`), def, "has a control character"},
		{"control character", []byte(`{"tab\there":1}`), def, "has a control character"},
		{"invalid UTF-8 name", []byte("{\"bad\xff\":1}"), def, "not valid UTF-8"},
		{"metadata prefix in any case", []byte(`{"_KAFKA_offset":1}`), def, "metadata columns"},
		{"known column, new field", []byte(`{"order_id":2,"note":"ok"}`), def, ""},
		{"unicode name", []byte(`{"größe":1}`), def, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			shape := committedShape(t)
			before := shape.String()
			_, err := decodeJSONWith(shape, c.in, c.lim)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want == "":
				return
			case err == nil:
				t.Fatalf("accepted; shape is now %.200s", shape)
			case !errors.Is(err, records.ErrLimit) || !errors.Is(err, records.ErrBadRecord):
				t.Fatalf("%v: not ErrLimit", err)
			case !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %q does not say %q", err, c.want)
			}
			if shape.String() != before {
				t.Fatalf("a refused record changed the shape to %.200s", shape)
			}
		})
	}
}

// TestJSONLimitsExistingDeepShape: a table whose shape is already deeper
// than its limit (made before the limit, or with a looser one) refuses
// records that reach past it instead of following the shape down.
func TestJSONLimitsExistingDeepShape(t *testing.T) {
	shape := &records.Shape{Kind: records.Struct}
	if _, err := decodeJSON(shape, nested(10)); err != nil {
		t.Fatal(err)
	}
	_, err := decodeJSONWith(shape, nested(10), records.Limits{MaxDepth: 4, MaxColumns: 100})
	if !errors.Is(err, records.ErrLimit) || !strings.Contains(err.Error(), "field a.a.a.a nests deeper than max_nesting_depth 4") {
		t.Fatalf("got %v", err)
	}
}

// TestDeepRecordHeap: refusing a 10,000-level record holds next to no
// memory (it is refused while skipped, before any level is built): the
// allocations per record are tiny and the process's resident memory
// stays far under issue 17's 1 GiB.
func TestDeepRecordHeap(t *testing.T) {
	in := nested(10000)
	var before, after runtime.MemStats
	res := rss.Measure(t, func() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range 100 {
			if _, err := decodeJSONWith(&records.Shape{Kind: records.Struct}, in, records.Limits{}.WithDefaults()); !errors.Is(err, records.ErrLimit) {
				t.Fatalf("got %v", err)
			}
		}
		runtime.ReadMemStats(&after)
	})
	t.Logf("refusing 100 records of 10,000 levels: %v", res)
	if res.Peak >= 1<<30 || res.Growth() > 64<<20 {
		t.Fatalf("refusing 10,000-level records: %v; want a peak under 1 GiB and growth under 64 MiB", res)
	}
	perRecord := (after.TotalAlloc - before.TotalAlloc) / 100
	t.Logf("refusing a 10,000-level record allocates %d bytes", perRecord)
	if perRecord > 64<<10 {
		t.Fatalf("refusing a 10,000-level (%d bytes) record allocated %d bytes", len(in), perRecord)
	}
}

// TestLimitDefaultsAgree: config cannot import records, so its copies of
// the defaults and caps are pinned here.
func TestLimitDefaultsAgree(t *testing.T) {
	if config.DefaultMaxNestingDepth != records.DefaultMaxNestingDepth || config.DefaultMaxColumns != records.DefaultMaxColumns ||
		config.MaxNestingDepthCap != records.MaxNestingDepthCap || config.MaxColumnsCap != records.MaxColumnsCap {
		t.Fatal("config's and records' limit defaults differ")
	}
}
