package ingest

import (
	"errors"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/records"
)

func structOf(fields ...*records.Field) *records.Shape {
	return &records.Shape{Kind: records.Struct, Fields: fields}
}

func field(name string, s *records.Shape) *records.Field { return &records.Field{Name: name, Shape: s} }

func long() *records.Shape { return &records.Shape{Kind: records.Long} }

// deepShape nests depth structs below the top one.
func deepShape(depth int) *records.Shape {
	s := long()
	for range depth {
		s = structOf(field("f", s))
	}
	return s
}

// TestSchemaTableLimits: a registry schema within the decoder's hard caps
// but past the table's own limits, or bringing a column that collides
// with an existing one ignoring case, is refused for the table: its
// records are bad (decoded, so the error mode applies, never a pause),
// the reason names the schema id and the limit, and the table's shape
// stays as it was.
func TestSchemaTableLimits(t *testing.T) {
	cases := []struct {
		name    string
		mapping config.Table
		node    Config
		schema  *records.Shape
		want    string         // "" followed
		table   *records.Shape // nil: struct<order_id: long>
	}{
		{"a table made before the limits still evolves", config.Table{}, Config{}, structOf(field("b", long())), "",
			structOf(field("A", long()), field("a", long()))},
		{"but not by a schema past them", config.Table{}, Config{}, structOf(field("B", long()), field("b", long())), "field b: collides with field B",
			structOf(field("A", long()), field("a", long()))},
		{"deeper than the mapping's depth", config.Table{MaxNestingDepth: 4}, Config{}, deepShape(5), "schema id 7: bad record: over the table's limits: field f.f.f.f nests deeper than max_nesting_depth 4", nil},
		{"deeper than the node's depth", config.Table{}, Config{MaxNestingDepth: 3}, deepShape(4), "max_nesting_depth 3", nil},
		{"mapping overrides node", config.Table{MaxNestingDepth: 10}, Config{MaxNestingDepth: 3}, deepShape(4), "", nil},
		{"past max_columns", config.Table{MaxColumns: 3}, Config{}, structOf(field("a", long()), field("b", long()), field("c", long())), "more than max_columns 3", nil},
		{"ORDER_ID beside order_id", config.Table{}, Config{}, structOf(field("ORDER_ID", long())), "field ORDER_ID: collides with field order_id", nil},
		{"NUL in a name", config.Table{}, Config{}, structOf(field("a\x00", long())), "has a control character", nil},
		{"within the limits", config.Table{}, Config{}, structOf(field("order_id", long()), field("b", long())), "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.table == nil {
				c.table = structOf(field("order_id", long()))
			}
			before := c.table.String()
			p := &Pipeline{n: &Node{Deps: Deps{Config: c.node}}, mapping: c.mapping, schemas: map[int]bool{}, shape: c.table}
			for range 2 { // the second time from the remembered refusal
				out, err := p.follow(c.schema, 7, 7, "")
				if c.want == "" {
					if err != nil || !p.schemas[7] {
						t.Fatalf("refused: %v", err)
					}
					return
				}
				if out != decoded || !errors.Is(err, records.ErrLimit) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("got %v (outcome %d), want a bad record saying %q", err, out, c.want)
				}
				if p.shape.String() != before || p.schemas[7] {
					t.Fatalf("the table's shape changed to %s", p.shape)
				}
			}
		})
	}
}
