package ingest

import (
	"errors"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/records"
)

func st(fields ...*records.Field) *records.Shape {
	return &records.Shape{Kind: records.Struct, Fields: fields}
}

func fl(name string, k records.Kind) *records.Field {
	return &records.Field{Name: name, Shape: &records.Shape{Kind: k}, Committed: true}
}

func dec(name string, p, s int) *records.Field {
	return &records.Field{Name: name, Shape: &records.Shape{Kind: records.Decimal, Precision: p, Scale: s}, Committed: true}
}

func TestEvolve(t *testing.T) {
	cases := []struct {
		name        string
		table, sch  *records.Shape
		want, error string
	}{
		{"same", st(fl("a", records.Long)), st(fl("a", records.Long)), "struct<a: long>", ""},
		{"add", st(fl("a", records.Long)), st(fl("a", records.Long), fl("b", records.String)), "struct<a: long, b: string>", ""},
		{"removed keeps column", st(fl("a", records.Long), fl("b", records.String)), st(fl("a", records.Long)), "struct<a: long, b: string>", ""},
		{"int to long", st(fl("a", records.Int)), st(fl("a", records.Long)), "struct<a: long>", ""},
		{"float to double", st(fl("a", records.Float)), st(fl("a", records.Double)), "struct<a: double>", ""},
		{"decimal widens", st(dec("a", 9, 2)), st(dec("a", 12, 2)), "struct<a: decimal(12, 2)>", ""},
		{"older int into long", st(fl("a", records.Long)), st(fl("a", records.Int)), "", "field a: column is long, schema 7 has int (narrowing)"},
		{"decimal narrows", st(dec("a", 12, 2)), st(dec("a", 9, 2)), "", "field a: column is decimal(12, 2), schema 7 has decimal(9, 2) (narrowing)"},
		{"decimal scale", st(dec("a", 9, 2)), st(dec("a", 9, 3)), "", "scale cannot change"},
		{"type change", st(fl("a", records.Long)), st(fl("a", records.String)), "", "field a: column is long, schema 7 has string"},
		{"nested add", st(&records.Field{Name: "s", Shape: st(fl("x", records.Long)), Committed: true}),
			st(&records.Field{Name: "s", Shape: st(fl("x", records.Long), fl("y", records.Bool))}), "struct<s: struct<x: long, y: boolean>>", ""},
		{"nested narrowing", st(&records.Field{Name: "s", Shape: st(fl("x", records.Long)), Committed: true}),
			st(&records.Field{Name: "s", Shape: st(fl("x", records.Int))}), "", "field s.x: column is long, schema 7 has int"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.table.String()
			c.table.SchemaID, c.table.CommittedSchemaID = 5, 5
			err := evolve(c.table, c.sch, 7)
			if c.error != "" {
				if !errors.Is(err, ErrIncompatibleSchema) || !strings.Contains(err.Error(), c.error) {
					t.Fatalf("error %v, want %q", err, c.error)
				}
				if c.table.String() != before {
					t.Fatalf("table changed on error: %s", c.table)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.table.String(); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
			if !c.table.HasUncommitted() || c.table.SchemaID != 7 {
				t.Fatal("a newer schema is not marked uncommitted")
			}
			c.table.MarkCommitted()
			if err := evolve(c.table, c.sch, 7); err != nil || c.table.HasUncommitted() {
				t.Fatalf("the same schema again: %v, uncommitted %v", err, c.table.HasUncommitted())
			}
		})
	}
}

// Records of an older schema id (a replay, or partitions still behind the
// newest version) fit the columns a newer schema widened.
func TestEvolveOlderWriter(t *testing.T) {
	table := st(fl("a", records.Int), dec("d", 9, 2))
	table.SchemaID, table.CommittedSchemaID = 3, 3
	if err := evolve(table, st(fl("a", records.Long), dec("d", 12, 2)), 4); err != nil {
		t.Fatal(err)
	}
	table.MarkCommitted()
	if err := evolve(table, st(fl("a", records.Int), dec("d", 9, 2)), 3); err != nil {
		t.Fatalf("older writer refused: %v", err)
	}
	if table.String() != "struct<a: long, d: decimal(12, 2)>" || table.SchemaID != 4 || table.HasUncommitted() {
		t.Fatalf("older writer changed the table: %s id %d", table, table.SchemaID)
	}
	if err := evolve(table, st(fl("a", records.Int)), 5); !errors.Is(err, ErrIncompatibleSchema) {
		t.Fatalf("a newer narrowing schema: %v", err)
	}
	if err := evolve(table, st(fl("a", records.String)), 2); !errors.Is(err, ErrIncompatibleSchema) {
		t.Fatalf("an older schema whose values do not fit: %v", err)
	}
}
