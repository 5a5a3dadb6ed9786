package delta

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/ledger"
)

func col(id int, name string, typ iceberg.Type) iceberg.NestedField {
	return iceberg.NestedField{ID: id, Name: name, Type: typ}
}

func structOf(fields ...iceberg.NestedField) *iceberg.StructType {
	return &iceberg.StructType{FieldList: fields}
}

func listOf(el iceberg.Type) *iceberg.ListType {
	return &iceberg.ListType{ElementID: 50, Element: el}
}

func mapOf(k, v iceberg.Type) *iceberg.MapType {
	return &iceberg.MapType{KeyID: 51, KeyType: k, ValueID: 52, ValueType: v}
}

var (
	i32 = iceberg.PrimitiveTypes.Int32
	i64 = iceberg.PrimitiveTypes.Int64
	str = iceberg.PrimitiveTypes.String
)

// evolveTo maps fields and evolves them from the schema string old.
func evolveTo(t *testing.T, old string, fields ...iceberg.NestedField) (schemaInfo, widening, error) {
	t.Helper()
	info, err := mapSchema(iceberg.NewSchema(1, fields...))
	if err != nil {
		t.Fatal(err)
	}
	w, err := info.evolve(old)
	return info, w, err
}

func schemaOf(t *testing.T, fields ...iceberg.NestedField) string {
	t.Helper()
	info, err := mapSchema(iceberg.NewSchema(0, fields...))
	if err != nil {
		t.Fatal(err)
	}
	return info.schemaString
}

// fieldChanges decodes delta.typeChanges of the field at path (names of
// struct fields, "element", "key" or "value" to step into a list or map).
func fieldChanges(t *testing.T, schema string, path ...string) []typeChange {
	t.Helper()
	var typ any
	if err := json.Unmarshal([]byte(schema), &typ); err != nil {
		t.Fatal(err)
	}
	var field map[string]any
	for _, step := range path {
		m := typ.(map[string]any)
		switch step {
		case "element":
			typ = m["elementType"]
			continue
		case "key", "value":
			typ = m[step+"Type"]
			continue
		}
		field = nil
		for _, f := range m["fields"].([]any) {
			if fm := f.(map[string]any); fm["name"] == step {
				field = fm
			}
		}
		if field == nil {
			t.Fatalf("no field %s in %s", step, schema)
		}
		typ = field["type"]
	}
	out, err := typeChanges(field, strings.Join(path, "."))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEvolveWidens: each widening Iceberg makes is recorded on the nearest
// struct field, with fieldPath inside lists and maps; other fields get no
// history and the table needs typeWidening exactly when one has one.
func TestEvolveWidens(t *testing.T) {
	for _, c := range []struct {
		name     string
		old, new iceberg.NestedField
		at       []string // the field holding the history
		want     []typeChange
	}{
		{"same", col(1, "a", i32), col(1, "a", i32), []string{"a"}, nil},
		{"int to long", col(1, "a", i32), col(1, "a", i64), []string{"a"}, []typeChange{{"integer", "long", ""}}},
		{"float to double", col(1, "f", iceberg.PrimitiveTypes.Float32), col(1, "f", iceberg.PrimitiveTypes.Float64),
			[]string{"f"}, []typeChange{{"float", "double", ""}}},
		{"decimal precision", col(1, "d", iceberg.DecimalTypeOf(9, 2)), col(1, "d", iceberg.DecimalTypeOf(18, 2)),
			[]string{"d"}, []typeChange{{"decimal(9,2)", "decimal(18,2)", ""}}},
		{"nested struct field", col(1, "s", structOf(col(2, "a", i32), col(3, "b", str))),
			col(1, "s", structOf(col(2, "a", i64), col(3, "b", str))), []string{"s", "a"}, []typeChange{{"integer", "long", ""}}},
		{"list element", col(1, "l", listOf(i32)), col(1, "l", listOf(i64)), []string{"l"}, []typeChange{{"integer", "long", "element"}}},
		{"field of a list's struct element", col(1, "l", listOf(structOf(col(2, "a", i32)))),
			col(1, "l", listOf(structOf(col(2, "a", i64)))), []string{"l", "element", "a"}, []typeChange{{"integer", "long", ""}}},
		{"map value", col(1, "m", mapOf(str, i32)), col(1, "m", mapOf(str, i64)), []string{"m"}, []typeChange{{"integer", "long", "value"}}},
		{"map key", col(1, "m", mapOf(i32, str)), col(1, "m", mapOf(i64, str)), []string{"m"}, []typeChange{{"integer", "long", "key"}}},
		{"list in a map value", col(1, "m", mapOf(str, listOf(iceberg.PrimitiveTypes.Float32))),
			col(1, "m", mapOf(str, listOf(iceberg.PrimitiveTypes.Float64))), []string{"m"}, []typeChange{{"float", "double", "value.element"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			other := col(9, "other", i32)
			info, w, err := evolveTo(t, schemaOf(t, c.old, other), c.new, other)
			if err != nil {
				t.Fatal(err)
			}
			if got := fieldChanges(t, info.schemaString, c.at...); !slices.Equal(got, c.want) {
				t.Errorf("%s: type changes %+v, want %+v", info.schemaString, got, c.want)
			}
			if got := fieldChanges(t, info.schemaString, "other"); got != nil {
				t.Errorf("an unchanged column got %+v", got)
			}
			widened := c.want != nil
			if w.changed != widened || w.history != widened || slices.Contains(info.features, FeatureTypeWidening) != widened {
				t.Errorf("widening %+v, features %v; want widened %v", w, info.features, widened)
			}
		})
	}
}

// TestEvolveRefuses: a type change Delta cannot widen names the column and
// both types.
func TestEvolveRefuses(t *testing.T) {
	for _, c := range []struct {
		name     string
		old, new iceberg.NestedField
		want     string
	}{
		{"long to int", col(1, "a", i64), col(1, "a", i32), "column a changes type from long to integer"},
		{"string to int", col(1, "a", str), col(1, "a", i32), "column a changes type from string to integer"},
		{"double to float", col(1, "f", iceberg.PrimitiveTypes.Float64), col(1, "f", iceberg.PrimitiveTypes.Float32),
			"column f changes type from double to float"},
		{"int to double", col(1, "a", i32), col(1, "a", iceberg.PrimitiveTypes.Float64), "column a changes type from integer to double"},
		{"decimal scale", col(1, "d", iceberg.DecimalTypeOf(9, 2)), col(1, "d", iceberg.DecimalTypeOf(12, 4)),
			"column d changes type from decimal(9,2) to decimal(12,4)"},
		{"decimal narrower", col(1, "d", iceberg.DecimalTypeOf(18, 2)), col(1, "d", iceberg.DecimalTypeOf(9, 2)),
			"column d changes type from decimal(18,2) to decimal(9,2)"},
		{"struct to string", col(1, "s", structOf(col(2, "a", i32))), col(1, "s", str), "column s changes type from struct to string"},
		{"list element narrowed", col(1, "l", listOf(i64)), col(1, "l", listOf(i32)), "column l.element changes type from long to integer"},
		{"nested field", col(1, "s", structOf(col(2, "a", str))), col(1, "s", structOf(col(2, "a", i64))),
			"column s.a changes type from string to long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := evolveTo(t, schemaOf(t, c.old), c.new)
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want ErrUnsupported with %q", err, c.want)
			}
		})
	}
}

// TestEvolveKeepsHistory: a second widening appends to the history, and
// later schema changes (a column added, an unchanged schema) keep it
// byte for byte.
func TestEvolveKeepsHistory(t *testing.T) {
	s := schemaOf(t, col(1, "d", iceberg.DecimalTypeOf(5, 2)), col(2, "n", i32))
	steps := []struct {
		name   string
		fields []iceberg.NestedField
		d, n   []typeChange
	}{
		{"widen d", []iceberg.NestedField{col(1, "d", iceberg.DecimalTypeOf(9, 2)), col(2, "n", i32)},
			[]typeChange{{"decimal(5,2)", "decimal(9,2)", ""}}, nil},
		{"widen d again and n", []iceberg.NestedField{col(1, "d", iceberg.DecimalTypeOf(18, 2)), col(2, "n", i64)},
			[]typeChange{{"decimal(5,2)", "decimal(9,2)", ""}, {"decimal(9,2)", "decimal(18,2)", ""}}, []typeChange{{"integer", "long", ""}}},
		{"add a column", []iceberg.NestedField{col(1, "d", iceberg.DecimalTypeOf(18, 2)), col(2, "n", i64), col(3, "x", str)},
			[]typeChange{{"decimal(5,2)", "decimal(9,2)", ""}, {"decimal(9,2)", "decimal(18,2)", ""}}, []typeChange{{"integer", "long", ""}}},
	}
	for _, step := range steps {
		info, w, err := evolveTo(t, s, step.fields...)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if !w.history || !slices.Contains(info.features, FeatureTypeWidening) {
			t.Fatalf("%s: widening %+v, features %v", step.name, w, info.features)
		}
		if got := fieldChanges(t, info.schemaString, "d"); !slices.Equal(got, step.d) {
			t.Fatalf("%s: d %+v, want %+v", step.name, got, step.d)
		}
		if got := fieldChanges(t, info.schemaString, "n"); !slices.Equal(got, step.n) {
			t.Fatalf("%s: n %+v, want %+v", step.name, got, step.n)
		}
		s = info.schemaString
	}
	again, w, err := evolveTo(t, s, steps[len(steps)-1].fields...)
	if err != nil || w.changed || again.schemaString != s {
		t.Fatalf("an unchanged schema: %v, %+v,\n%s\nwant\n%s", err, w, again.schemaString, s)
	}
}

// TestPromotedBounds: bounds and partition values of a file written
// before its column was promoted (4-byte int and float) read as the wider
// type.
func TestPromotedBounds(t *testing.T) {
	for _, c := range []struct {
		typ  iceberg.Type
		old  iceberg.Literal
		want any
	}{
		{i64, iceberg.NewLiteral(int32(-7)), int64(-7)},
		{iceberg.PrimitiveTypes.Float64, iceberg.NewLiteral(float32(1.5)), float64(1.5)},
		{i64, iceberg.NewLiteral(int64(1) << 40), int64(1) << 40},
	} {
		got, err := promotedLiteral(c.typ, lit(t, c.old))
		if err != nil || got.Any() != c.want {
			t.Errorf("%s from %v: %v, %v; want %v", c.typ, c.old, got, err, c.want)
		}
	}
}

// TestPromotedPartitionValue: a file partitioned by an int column before
// it was promoted to long keeps its partition value.
func TestPromotedPartitionValue(t *testing.T) {
	cols := []partCol{{name: "n", fieldID: 1000, typ: i64}}
	pv, err := partitionValues(cols, ledger.FileDescriptor{PartValues: map[int][]byte{1000: lit(t, iceberg.NewLiteral(int32(42)))}})
	if err != nil || pv["n"] == nil || *pv["n"] != "42" {
		t.Fatalf("partition value %v, %v; want 42", pv, err)
	}
}
