package records

import (
	"errors"
	"strings"
	"testing"
)

func st(fields ...*Field) *Shape { return &Shape{Kind: Struct, Fields: fields} }

func fl(name string, s *Shape) *Field { return &Field{Name: name, Shape: s} }

var leaf = &Shape{Kind: Long}

// TestLimitsCheck: depth counts the levels of objects as JSON does (the
// top struct is level 1, so MaxDepth 3 allows {"a":{"b":{"c":1}}}); it counts every struct, list and map level; columns
// count nested fields, list elements and map keys and values; names must
// be valid and distinct ignoring case within their struct.
func TestLimitsCheck(t *testing.T) {
	lim := Limits{MaxDepth: 3, MaxColumns: 5}
	list := func(e *Shape) *Shape { return &Shape{Kind: List, Elem: e} }
	cases := []struct {
		name  string
		shape *Shape
		want  string // "" passes
	}{
		{"flat", st(fl("a", leaf), fl("b", leaf)), ""},
		{"at the depth", st(fl("a", st(fl("b", list(leaf))))), ""},
		{"past the depth", st(fl("a", st(fl("b", st(fl("c", st(fl("d", leaf)))))))), "field a.b.c nests deeper than max_nesting_depth 3"},
		{"list past the depth", st(fl("l", list(list(list(leaf))))), "field l[][] nests deeper"},
		{"map key and value count", st(fl("m", &Shape{Kind: Map, Key: leaf, Elem: leaf}), fl("x", leaf), fl("y", leaf), fl("z", leaf)), "more than max_columns 5"},
		{"five columns", st(fl("m", &Shape{Kind: Map, Key: leaf, Elem: leaf}), fl("x", leaf), fl("y", leaf)), ""},
		{"case collision", st(fl("Id", leaf), fl("ID", leaf)), "field ID: collides with field Id"},
		{"nested case collision", st(fl("s", st(fl("x", leaf), fl("X", leaf)))), "field s.X: collides with field s.x"},
		{"NUL", st(fl("a\x00", leaf)), "control character"},
		{"DEL is a control character", st(fl("a\x7f", leaf)), "control character"},
		{"invalid UTF-8", st(fl("a\xff", leaf)), "not valid UTF-8"},
		{"empty name", st(fl("", leaf)), "empty"},
		{"non-ASCII letters", st(fl("größe", leaf), fl("Straße", leaf)), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := lim.Check(c.shape, 0, "")
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (!errors.Is(err, ErrLimit) || !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want ErrLimit saying %q", err, c.want)
			}
		})
	}
}

// TestColumnsStopsAtLimit: counting a huge shape costs no more than the
// limit.
func TestColumnsStopsAtLimit(t *testing.T) {
	s := st()
	for range 100000 {
		s.Fields = append(s.Fields, fl("c", leaf))
	}
	if n := s.Columns(10); n != 11 {
		t.Fatalf("Columns(10) of 100,000 = %d, want 11", n)
	}
	if n := st(fl("a", st(fl("b", leaf)))).Columns(10); n != 2 {
		t.Fatalf("nested: %d", n)
	}
}
