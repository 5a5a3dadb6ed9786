package delta

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
)

// TestHistoryFrom: a log's first version records each field's type
// changes over the table's schemas, by field id and in schema order, on
// the nearest struct field.
func TestHistoryFrom(t *testing.T) {
	f32, f64 := iceberg.PrimitiveTypes.Float32, iceberg.PrimitiveTypes.Float64
	schema := func(id int, fields ...iceberg.NestedField) *iceberg.Schema { return iceberg.NewSchema(id, fields...) }
	for _, c := range []struct {
		name    string
		schemas []*iceberg.Schema // the last by id is the current one
		at      []string
		want    []typeChange
	}{
		{"one schema", []*iceberg.Schema{schema(0, col(1, "a", i32))}, []string{"a"}, nil},
		{"a column added", []*iceberg.Schema{schema(0, col(1, "a", i32)), schema(1, col(1, "a", i32), col(2, "b", str))}, []string{"a"}, nil},
		{"int to long", []*iceberg.Schema{schema(0, col(1, "a", i32)), schema(1, col(1, "a", i64))},
			[]string{"a"}, []typeChange{{"integer", "long", ""}}},
		{"two widenings, schemas out of order", []*iceberg.Schema{
			schema(2, col(1, "d", iceberg.DecimalTypeOf(18, 2))), schema(0, col(1, "d", iceberg.DecimalTypeOf(5, 2))),
			schema(1, col(1, "d", iceberg.DecimalTypeOf(9, 2)))},
			[]string{"d"}, []typeChange{{"decimal(5,2)", "decimal(9,2)", ""}, {"decimal(9,2)", "decimal(18,2)", ""}}},
		{"nested struct field", []*iceberg.Schema{schema(0, col(1, "s", structOf(col(2, "a", i32)))), schema(1, col(1, "s", structOf(col(2, "a", i64))))},
			[]string{"s", "a"}, []typeChange{{"integer", "long", ""}}},
		{"list element", []*iceberg.Schema{schema(0, col(1, "l", listOf(f32))), schema(1, col(1, "l", listOf(f64)))},
			[]string{"l"}, []typeChange{{"float", "double", "element"}}},
		{"map value", []*iceberg.Schema{schema(0, col(1, "m", mapOf(str, i32))), schema(1, col(1, "m", mapOf(str, i64)))},
			[]string{"m"}, []typeChange{{"integer", "long", "value"}}},
		{"renamed, then widened", []*iceberg.Schema{schema(0, col(1, "old", i32)), schema(1, col(1, "new", i64))},
			[]string{"new"}, []typeChange{{"integer", "long", ""}}},
		{"a dropped column Delta lacks", []*iceberg.Schema{schema(0, col(1, "a", i32), col(2, "t", iceberg.PrimitiveTypes.Time)),
			schema(1, col(1, "a", i32))}, []string{"a"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cur := slices.MaxFunc(c.schemas, func(a, b *iceberg.Schema) int { return a.ID - b.ID })
			info, err := mapSchema(cur)
			if err != nil {
				t.Fatal(err)
			}
			widened, err := info.historyFrom(cur, c.schemas)
			if err != nil {
				t.Fatal(err)
			}
			if got := fieldChanges(t, info.schemaString, c.at...); !slices.Equal(got, c.want) {
				t.Errorf("%s: type changes %+v, want %+v", info.schemaString, got, c.want)
			}
			if widened != (c.want != nil) || slices.Contains(info.features, FeatureTypeWidening) != widened {
				t.Errorf("widened %v, features %v; want %v", widened, info.features, c.want != nil)
			}
		})
	}
}

// TestFirstVersionOfAWidenedTable: the first version of a log started for
// a table that widened a column carries typeWidening, the table property
// and the change; one for a table that never widened stays at 1/1.
func TestFirstVersionOfAWidenedTable(t *testing.T) {
	for _, widened := range []bool{false, true} {
		dir := t.TempDir()
		tbl := testTable("file://"+dir, 0)
		tbl.Schemas = []*iceberg.Schema{tbl.Schema, iceberg.NewSchema(1, tbl.Schema.Fields()...)}
		if widened {
			tbl.Schema = widenedSchema()
			tbl.Schemas[1] = tbl.Schema
		}
		l := openLog(t, LocalStore(dir))
		res, err := l.Publish(context.Background(), appendCommit(tbl, 1, dataFile(t, tbl.Location, 0, "x", 1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		v0 := readVersion(t, dir, res.Version)
		p, m := v0[1].Protocol, v0[2].MetaData
		if !widened {
			if p.MinReaderVersion != 1 || p.MinWriterVersion != 1 || m.Configuration[enableTypeWideningKey] != "" {
				t.Fatalf("a table that never widened: %+v, %+v", p, m.Configuration)
			}
			continue
		}
		if p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || !slices.Equal(p.ReaderFeatures, []string{FeatureTypeWidening}) ||
			m.Configuration[enableTypeWideningKey] != "true" {
			t.Fatalf("a widened table's first version: %+v, %+v", p, m.Configuration)
		}
		if got := fieldChanges(t, m.SchemaString, "nested", "a"); !slices.Equal(got, []typeChange{{"integer", "long", ""}}) {
			t.Fatalf("nested.a's history %+v", got)
		}
	}
}
