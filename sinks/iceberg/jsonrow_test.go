package iceberg

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/worker/ingest"
)

// The worker's JSON decoder is the oracle here: a record held as JSON must
// become the row that the map it decodes to becomes. The import runs from
// this test only; the sink itself never sees the worker.

// jsonRowSchema infers a json table's columns from seed documents, with
// uncommitted long columns that later documents widen to double.
func jsonRowSchema(t testing.TB, seeds ...string) (*records.Shape, *iceberg.Schema, *arrow.Schema) {
	shape := &records.Shape{Kind: records.Struct}
	for _, s := range seeds {
		if _, err := ingest.DecodeJSON(shape, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := tableSchema("json", shape)
	if err != nil {
		t.Fatal(err)
	}
	as, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return shape, sc, as
}

// bothWays builds one batch from doc decoded into a map and one from doc
// held as JSON. ok is false when the decoder refuses doc or would change
// the columns (the worker never holds such a record as JSON).
func bothWays(t testing.TB, shape *records.Shape, sc *iceberg.Schema, as *arrow.Schema, doc []byte) (fromMap, fromJSON arrow.RecordBatch, jsonErr error, ok bool) {
	before := shape.String()
	probe := shape.Clone()
	v, err := ingest.DecodeJSON(probe, doc)
	if err != nil || probe.String() != before {
		return nil, nil, nil, false
	}
	meta := records.Record{Topic: "t", Partition: 1, Offset: 7, Timestamp: time.UnixMilli(1700000000000), Key: []byte("k")}
	m, j := meta, meta
	m.Value, j.JSON = v, doc
	one := func(r *records.Record) (arrow.RecordBatch, error) {
		for b, err := range recordBatches(sc, as, []*records.Record{r}, false) {
			return b, err
		}
		return nil, nil
	}
	fromMap, err = one(&m)
	if err != nil {
		t.Fatalf("the map of %q: %v", doc, err)
	}
	fromJSON, jsonErr = one(&j)
	return fromMap, fromJSON, jsonErr, true
}

var jsonRowSeeds = []string{
	`{"id":1,"s":"x","b":true,"d":1.5,"o":{"n":2,"l":[{"k":"v","z":0}]},"ls":[1,2],"w":3,"e":{}}`,
	`{"w":3.25}`, // w widens to double: the long 3 above is appended as 3.0
}

func TestJSONRowMatchesDecodedMap(t *testing.T) {
	shape, sc, as := jsonRowSchema(t, jsonRowSeeds...)
	for _, doc := range []string{
		`{"id":1,"s":"x","b":true,"d":1.5,"o":{"n":2,"l":[{"k":"v","z":0}]},"ls":[1,2],"w":3,"e":{}}`,
		`{}`,
		`{"ls":[],"o":{"l":[]},"e":null}`,
		`{"id":null,"s":null,"o":{"l":[null,{"z":-4}]},"ls":[null,5]}`,
		`{"w":7,"d":-0.0,"id":-9223372036854775808,"b":false}`,
		`{"d":1e308,"w":12345678901234567,"o":{"n":9223372036854775807}}`,
		`{"s":"tab\t \u00e9 \ud83d\ude00 \"q\" \\ \/ \ud800"}`,
		"{\"s\":\"bad \xff\xfe utf-8\",\"o\":{\"l\":[{\"k\":\"\xc3\"}]}}",
		`{"e":{},"o":{"l":[{"k":"first"},{"k":"second","z":1}]},"s":"` + strings.Repeat("long ", 200) + `"}`,
		` { "s" : "spaced" , "ls" : [ 1 , 2 ] } `,
		`{"\u0069d":5,"s":"an escaped key"}`,
		`{"ls":[3],"id":4,"s":"fields out of order"}`,
	} {
		fromMap, fromJSON, err, ok := bothWays(t, shape, sc, as, []byte(doc))
		if !ok {
			t.Fatalf("the decoder refuses %s or changes the columns with it", doc)
		}
		if err != nil {
			t.Fatalf("held as JSON, %s: %v", doc, err)
		}
		// The check leaves an escaped key, and e (an empty object has no
		// column), to the decoder.
		want := !strings.Contains(doc, `\u0069d`) && !strings.Contains(doc, `"e":`)
		if got := ingest.FitsJSON(shape, []byte(doc), records.Limits{}.WithDefaults()); got != want {
			t.Errorf("the check lets %s through: %v, want %v", doc, got, want)
		}
		if !array.RecordEqual(fromMap, fromJSON) {
			t.Errorf("%s\nfrom the map:  %v\nfrom the JSON: %v", doc, fromMap, fromJSON)
		}
	}
}

func TestJSONRowErrors(t *testing.T) {
	shape, sc, as := jsonRowSchema(t, jsonRowSeeds...)
	_ = shape
	for doc, want := range map[string]string{
		`{"id":"x"}`:               "column id is long, value is a string",
		`{"id":1.5}`:               "column id is long, value 1.5 has a fraction",
		`{"o":{"l":[{"z":true}]}}`: "column o.l[].z is long, value is a boolean",
		`{"id":1,"id":2}`:          `field "id" appears twice`,
		`{"d":1e400}`:              "column d is double, value 1e400",
		`[1]`:                      "not a JSON object",
		`{"id":1} x`:               "trailing data",
	} {
		r := &records.Record{Topic: "t", JSON: []byte(doc)}
		var err error
		for _, e := range recordBatches(sc, as, []*records.Record{r}, false) {
			err = e
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to say %q", doc, err, want)
		}
	}
}

// FuzzJSONRow: a document the decoder accepts into the columns as they
// are becomes, held as JSON, the row its decoded map becomes, or is
// refused with an error (a repeated key); one the worker's check lets
// through is never refused (its flush would fail on every retry); no input
// panics the appender.
func FuzzJSONRow(f *testing.F) {
	for _, s := range append(jsonRowSeeds,
		`{"id":1,"id":null}`, `{"o":{"l":[{"k":"\u00e9","k":"x"}]}}`, `{"unknown":{"x":[1,{"y":"}"}]},"id":2}`,
		"{\"s\":\"\xff\"}", `{"ls":[1,[2]]}`, `{"d":-0}`) {
		f.Add([]byte(s))
	}
	shape, sc, as := jsonRowSchema(f, jsonRowSeeds...)
	f.Fuzz(func(t *testing.T, doc []byte) {
		// Any bytes: the appender errs or appends, never panics.
		for range recordBatches(sc, as, []*records.Record{{Topic: "t", JSON: doc}}, false) {
		}
		fromMap, fromJSON, err, ok := bothWays(t, shape, sc, as, doc)
		fits := ingest.FitsJSON(shape, doc, records.Limits{}.WithDefaults())
		switch {
		case fits && !ok:
			t.Fatalf("the check let %q through, which the decoder refuses", doc)
		case fits && err != nil:
			t.Fatalf("the check let %q through, which the appender refuses: %v", doc, err)
		case !ok || err != nil:
			return
		}
		if !array.RecordEqual(fromMap, fromJSON) {
			t.Fatalf("%q\nfrom the map:  %v\nfrom the JSON: %v", doc, fromMap, fromJSON)
		}
	})
}
