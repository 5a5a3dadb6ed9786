package iceberg

import (
	"context"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
)

func sh(k records.Kind) *records.Shape { return &records.Shape{Kind: k} }

func field(name string, s *records.Shape) *records.Field { return &records.Field{Name: name, Shape: s} }

// Every shape kind a registry schema produces becomes its Iceberg type,
// writes, commits and reads back; evolving it (promotions, a new field)
// keeps existing field ids.
func TestSchemaKindsRoundTripAndEvolve(t *testing.T) {
	ctx := context.Background()
	s, cat, _ := newSink(t)
	spec := sink.TableSpec{Key: ledger.TableKey([]string{"db", "typed"}), Ident: []string{"db", "typed"}, Format: "avro"}
	shape := &records.Shape{Kind: records.Struct, Fields: []*records.Field{
		field("i", sh(records.Int)),
		field("f", sh(records.Float)),
		field("bin", sh(records.Bytes)),
		field("fx", &records.Shape{Kind: records.Fixed, Size: 4}),
		field("dec", &records.Shape{Kind: records.Decimal, Precision: 9, Scale: 2}),
		field("d", sh(records.Date)),
		field("tm", sh(records.Time)),
		field("ts", sh(records.Timestamp)),
		field("tstz", sh(records.TimestampTz)),
		field("id", sh(records.UUID)),
		field("m", &records.Shape{Kind: records.Map, Key: sh(records.String), Elem: sh(records.Long)}),
		field(ColKeyDecoded, sh(records.String)),
	}}
	if err := s.Prepare(ctx, spec, shape); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
	id := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	val := map[string]any{
		"i": int32(-7), "f": float32(1.5), "bin": []byte{0, 1}, "fx": []byte("abcd"),
		"dec": big.NewInt(-12345), "d": records.Days(19782), "tm": 13*time.Hour + 5*time.Microsecond,
		"ts": ts, "tstz": ts, "id": id,
		"m":           []records.MapEntry{{Key: "a", Value: int64(1)}, {Key: "b", Value: nil}},
		ColKeyDecoded: "k1",
	}
	files, err := s.Write(ctx, spec, "0b5c2a94-4a8c-4f43-9d6b-2f0f5e1b7c12", []*records.Record{{Topic: "t", Offset: 8, Value: val}})
	if err != nil {
		t.Fatal(err)
	}
	if err := commitForTest(ctx, s, cat, spec, files, ledger.TopicPartition{Topic: "t"}); err != nil {
		t.Fatal(err)
	}
	tbl, _ := cat.LoadTable(ctx, spec.Ident)
	before := map[string]int{}
	for _, f := range tbl.Schema().Fields() {
		before[f.Name] = f.ID
	}

	// Evolve: int -> long, float -> double, decimal(9,2) -> decimal(12,2),
	// a new field; "bin" is gone from the new schema but keeps its column.
	next := shape.Clone()
	next.MarkCommitted()
	next.Lookup("i").Shape.Kind, next.Lookup("i").Committed = records.Long, false
	next.Lookup("f").Shape.Kind, next.Lookup("f").Committed = records.Double, false
	next.Lookup("dec").Shape.Precision, next.Lookup("dec").Committed = 12, false
	next.Fields = append(next.Fields, field("added", sh(records.String)))
	next.Fields = removeField(next.Fields, "bin")
	next.SchemaID = 9
	if err := s.Prepare(ctx, spec, next); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Shape(ctx, spec); err != nil || got.SchemaID != 9 || got.HasUncommitted() {
		t.Fatalf("schema id not recorded: %v %+v", err, got)
	}
	files, err = s.Write(ctx, spec, "0b5c2a94-4a8c-4f43-9d6b-2f0f5e1b7c13", []*records.Record{{Topic: "t", Offset: 9, Value: map[string]any{
		"i": int64(1) << 40, "f": 2.25, "dec": big.NewInt(123456789012), "added": "x",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := commitForTest(ctx, s, cat, spec, files, ledger.TopicPartition{Topic: "t"}); err != nil {
		t.Fatal(err)
	}
	tbl, _ = cat.LoadTable(ctx, spec.Ident)
	for _, f := range tbl.Schema().Fields() {
		if id, ok := before[f.Name]; ok && id != f.ID {
			t.Errorf("field %s id changed %d -> %d", f.Name, id, f.ID)
		}
	}
	// The name mapping (schema.name-mapping.default, for readers of files
	// without field ids) follows the evolution: the new column is in it
	// with the id the schema gave it.
	added, _ := tbl.Schema().FindFieldByName("added")
	if id, ok := nameMappingID(tbl.NameMapping(), "added"); !ok || id != added.ID {
		t.Errorf("name mapping %v lacks added (id %d)", tbl.NameMapping(), added.ID)
	}
	back, err := shapeOf(tbl.Schema(), "avro")
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Lookup("i").Shape.Kind; got != records.Long {
		t.Errorf("i is %s after promotion", got)
	}
	if got := back.Lookup("dec").Shape.Precision; got != 12 {
		t.Errorf("dec precision %d after widening", got)
	}
	if back.Lookup("bin") == nil || back.Lookup(ColKeyDecoded) == nil {
		t.Errorf("removed or key column lost: %s", back)
	}

	arr, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Release()
	if arr.NumRows() != 2 {
		t.Fatalf("rows %d", arr.NumRows())
	}
	// Rows in offset order: the scan returns files in no fixed order.
	col := func(name string) string {
		vals := map[string]string{}
		offs := arr.Column(arr.Schema().FieldIndices(ColOffset)[0]).Data()
		c := arr.Column(arr.Schema().FieldIndices(name)[0]).Data()
		for k, ch := range c.Chunks() {
			for i := 0; i < ch.Len(); i++ {
				off := offs.Chunk(k).(interface{ ValueStr(int) string }).ValueStr(i)
				vals[off] = ch.(interface{ ValueStr(int) string }).ValueStr(i)
			}
		}
		return vals["8"] + ";" + vals["9"] + ";"
	}
	want := map[string]string{
		"i":     "-7;1099511627776;",
		"f":     "1.5;2.25;",
		"dec":   "-123.45;1234567890.12;",
		"d":     "2024-02-29;(null);",
		"tm":    "13:00:00.000005;(null);",
		"id":    "01020304-0506-0708-090a-0b0c0d0e0f10;(null);",
		"bin":   "AAE=;(null);",
		"fx":    "YWJjZA==;(null);",
		"added": "(null);x;",
	}
	for name, w := range want {
		if got := col(name); got != w {
			t.Errorf("column %s = %q, want %q", name, got, w)
		}
	}
	if got := col("m"); got != `[{"key":"a","value":1},{"key":"b","value":null}];(null);` {
		t.Errorf("map column = %s", got)
	}
}

func removeField(fs []*records.Field, name string) []*records.Field {
	var out []*records.Field
	for _, f := range fs {
		if f.Name != name {
			out = append(out, f)
		}
	}
	return out
}

// nameMappingID is the field id a name mapping gives a top-level name.
func nameMappingID(nm iceberg.NameMapping, name string) (int, bool) {
	for _, f := range nm {
		if slices.Contains(f.Names, name) && f.FieldID != nil {
			return *f.FieldID, true
		}
	}
	return 0, false
}
