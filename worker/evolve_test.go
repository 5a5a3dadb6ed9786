package worker

import (
	"errors"
	"strings"
	"testing"

	"github.com/floe-io/floe/records"
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
			if c.name != "same" && c.name != "removed keeps column" && !c.table.HasUncommitted() {
				t.Fatal("a change is not marked uncommitted")
			}
			if (c.name == "same" || c.name == "removed keeps column") && c.table.HasUncommitted() {
				t.Fatal("no change but marked uncommitted")
			}
		})
	}
}
