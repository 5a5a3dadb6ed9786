package ingest

import (
	"context"
	"reflect"
	"testing"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/status"
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

// TestKeptRecordCharge: a record kept as fetched carries the charge of a
// raw one; one checked against columns that changed before the pipeline
// took it is decoded, and its charge (and the budget's) grows to a
// decoded value's without waiting.
func TestKeptRecordCharge(t *testing.T) {
	shape := &records.Shape{Kind: records.Struct}
	if _, err := decodeJSON(shape, []byte(`{"n":1}`)); err != nil { // n: long, not committed yet
		t.Fatal(err)
	}
	tr := status.NewTracker()
	n := &Node{mem: newBudget(1<<20, nil)}
	n.Config.TargetFileSize = 1 << 30
	p := &Pipeline{n: n, spec: sink.TableSpec{Format: "json"}, shape: shape,
		table: func() *status.Table { return tr.Table("t", "t") }}
	tp := ledger.TopicPartition{Topic: "t", Partition: 0}
	p.parts = map[ledger.TopicPartition]*partState{tp: {tp: tp, meter: &meter{}}}
	p.publishShape()
	var ck checker
	fetch := func(off int64, value string) fetched {
		m := source.Message{Offset: off, Value: []byte(value)}
		f := fetched{tp: tp, msg: m}
		f.fits, f.preVer = p.predecode(&ck, m.Value)
		f.cost = RecordCost("json", m)
		if f.fits {
			f.cost = RecordCost("raw", m)
		}
		if err := n.mem.acquire(context.Background(), f.cost); err != nil {
			t.Fatal(err)
		}
		return f
	}
	ctx := context.Background()
	kept := fetch(0, `{"n":2}`)
	widen := fetch(1, `{"n":1.5}`)
	stale := fetch(2, `{"n":3}`) // checked now, against n long; taken after widen
	if !kept.fits || !stale.fits || widen.fits {
		t.Fatalf("fits: %v %v %v, want true true false", kept.fits, stale.fits, widen.fits)
	}
	p.handle(ctx, kept)
	p.handle(ctx, widen)
	p.handle(ctx, stale)
	if len(p.buf) != 3 {
		t.Fatalf("%d records buffered, want 3", len(p.buf))
	}
	full := RecordCost("json", stale.msg)
	for i, want := range []struct {
		json bool
		mem  int64
	}{{true, kept.cost}, {false, widen.cost}, {false, full}} {
		r := p.buf[i]
		if (r.JSON != nil) != want.json || r.Mem != want.mem {
			t.Errorf("record %d: kept %v, charged %d; want kept %v, charged %d", i, r.JSON != nil, r.Mem, want.json, want.mem)
		}
	}
	if got, want := n.mem.Held(), kept.cost+widen.cost+full; got != want || p.charged != want {
		t.Fatalf("budget holds %d, pipeline charged %d, want %d", got, p.charged, want)
	}
}
