package ingest

import (
	"context"
	"reflect"
	"testing"

	"github.com/floe-io/floe/records"
	"github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/source"
)

// TestDecodeJSONFits: the fetchers' decode gives what the pipeline's gives
// for a record that fits the columns, declines (ok false) one that would
// add or widen a column or is bad, and never changes the shape it reads.
func TestDecodeJSONFits(t *testing.T) {
	base := func() *records.Shape {
		s := &records.Shape{Kind: records.Struct}
		if _, err := decodeJSON(s, []byte(`{"id":1,"name":"a","nested":{"x":true},"l":[1,2]}`)); err != nil {
			t.Fatal(err)
		}
		s.MarkCommitted()
		return s
	}
	lim := records.Limits{}.WithDefaults()
	for _, c := range []struct {
		name string
		doc  string
		fits bool
	}{
		{"fits", `{"id":2,"name":"b","nested":{"x":false},"l":[3]}`, true},
		{"fits, fields missing", `{"name":"c"}`, true},
		{"fits, other order", `{"l":[],"nested":{"x":true},"id":3}`, true},
		{"a new field", `{"id":4,"new":"n"}`, false},
		{"a new nested field", `{"nested":{"x":true,"y":1}}`, false},
		{"a double into the long column", `{"id":4.5}`, false},
		{"bad JSON", `{"id":`, false},
		{"not an object", `[1]`, false},
		{"trailing data", `{"id":1} x`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := base()
			before := snap.String()
			got, ok := decodeJSONFits(snap, []byte(c.doc), lim)
			if snap.String() != before {
				t.Fatalf("the fetchers' decode changed the shape: %s -> %s", before, snap)
			}
			if ok != c.fits {
				t.Fatalf("ok = %v, want %v", ok, c.fits)
			}
			if !ok {
				return
			}
			own := base()
			want, changed, err := decodeJSONChanged(own, []byte(c.doc), lim)
			if err != nil || changed {
				t.Fatalf("the pipeline's decode: changed %v, %v", changed, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("fetcher decoded %#v, pipeline %#v", got, want)
			}
		})
	}
}

// TestStaleCheckIsRedone: a value the fetcher checked against columns
// that changed before the pipeline took it (here a long column widened to
// double by the record before it) is decoded on the pipeline, so its value
// has the column's type now; one checked against the current columns is
// kept as fetched.
func TestStaleCheckIsRedone(t *testing.T) {
	shape := &records.Shape{Kind: records.Struct}
	if _, err := decodeJSON(shape, []byte(`{"n":1}`)); err != nil { // n: long, not committed yet
		t.Fatal(err)
	}
	p := &Pipeline{n: &Node{}, spec: sink.TableSpec{Format: "json"}, shape: shape}
	p.publishShape()
	var ck checker
	fits, ver := p.predecode(&ck, []byte(`{"n":2}`))
	if !fits {
		t.Fatal("{\"n\":2} does not fit n long")
	}
	ctx := context.Background()
	widen := &records.Record{}
	if v := p.decode(ctx, fetched{msg: source.Message{Value: []byte(`{"n":1.5}`)}}, widen); v.err != nil {
		t.Fatal(v.err)
	}
	if got := p.shape.Lookup("n").Shape.Kind; got != records.Double {
		t.Fatalf("n is %s, want double", got)
	}
	rec := &records.Record{}
	if v := p.decode(ctx, fetched{msg: source.Message{Value: []byte(`{"n":2}`)}, fits: true, preVer: ver}, rec); v.err != nil {
		t.Fatal(v.err)
	}
	if _, ok := rec.Value["n"].(float64); !ok || rec.JSON != nil {
		t.Fatalf("n decoded as %T (%v), JSON %q: the stale check was used", rec.Value["n"], rec.Value["n"], rec.JSON)
	}
	// A current one is kept as fetched.
	value := []byte(`{"n":3}`)
	fits, ver = p.predecode(&ck, value)
	if !fits {
		t.Fatal("not checked against the current columns")
	}
	rec = &records.Record{}
	p.decode(ctx, fetched{msg: source.Message{Value: value}, fits: true, preVer: ver}, rec)
	if rec.Value != nil || string(rec.JSON) != string(value) {
		t.Fatalf("a record checked against the current columns was decoded again: Value %v, JSON %q", rec.Value, rec.JSON)
	}
}
