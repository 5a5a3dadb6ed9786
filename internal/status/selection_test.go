package status

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestParseSelection(t *testing.T) {
	for _, c := range []struct {
		query string
		want  Selection
		bad   string // the parameter the error names
	}{
		{"", Selection{}, ""},
		{"table=a.b&table=a.c&q=%20ord%20&state=degraded&offset=10&limit=5",
			Selection{Tables: []string{"a.b", "a.c"}, Query: "ord", State: StateDegraded, Offset: 10, Limit: 5}, ""},
		{"state=SLEEPING", Selection{}, "state"},
		{"limit=-1", Selection{}, "limit"},
		{"offset=ten", Selection{}, "offset"},
	} {
		q, _ := url.ParseQuery(c.query)
		got, err := ParseSelection(q)
		if c.bad != "" {
			if !errors.Is(err, ErrBadSelection) || !strings.Contains(err.Error(), c.bad+":") {
				t.Errorf("%q: error %v, want one naming %s", c.query, err, c.bad)
			}
			continue
		}
		if err != nil || !slices.Equal(got.Tables, c.want.Tables) || got.Query != c.want.Query || got.State != c.want.State ||
			got.Offset != c.want.Offset || got.Limit != c.want.Limit {
			t.Errorf("%q: %+v, %v; want %+v", c.query, got, err, c.want)
		}
	}
	many := url.Values{"table": make([]string, MaxTableFilter+1)}
	if _, err := ParseSelection(many); !errors.Is(err, ErrBadSelection) {
		t.Errorf("%d names: %v, want refused", MaxTableFilter+1, err)
	}
}

func TestSelect(t *testing.T) {
	rep := Report{Tables: []TableReport{
		{Table: "db.clicks", State: StateRunning}, {Table: "db.orders", State: StateDegraded},
		{Table: "db.orders_dlq", State: StateRunning}, {Table: "ops.logs", State: StateRunning},
		{Table: "ops.orders_eu", State: StateDegraded},
	}}
	names := func(r Report) []string {
		var out []string
		for _, t := range r.Tables {
			out = append(out, t.Table)
		}
		return out
	}
	for _, c := range []struct {
		name    string
		sel     Selection
		want    []string
		matched int
	}{
		{"every table", Selection{}, []string{"db.clicks", "db.orders", "db.orders_dlq", "ops.logs", "ops.orders_eu"}, 5},
		{"a state", Selection{State: StateDegraded}, []string{"db.orders", "ops.orders_eu"}, 2},
		{"a substring, any case", Selection{Query: "ORDERS"}, []string{"db.orders", "db.orders_dlq", "ops.orders_eu"}, 3},
		{"names", Selection{Tables: []string{"ops.logs", "db.clicks", "nope.x"}}, []string{"db.clicks", "ops.logs"}, 2},
		{"a page", Selection{Offset: 1, Limit: 2}, []string{"db.orders", "db.orders_dlq"}, 5},
		{"past the end", Selection{Offset: 9, Limit: 2}, nil, 5},
		{"combined", Selection{Query: "orders", State: StateRunning}, []string{"db.orders_dlq"}, 1},
	} {
		got := Select(rep, c.sel)
		if !slices.Equal(names(got), c.want) || got.Tables == nil {
			t.Errorf("%s: %v, want %v", c.name, names(got), c.want)
		}
		if s := got.Summary; s == nil || s.Total != 5 || s.Matched != c.matched || s.States[StateDegraded] != 2 || s.States[StateRunning] != 3 {
			t.Errorf("%s: summary %+v, want 5 tables, %d matched, 2 degraded, 3 running", c.name, got.Summary, c.matched)
		}
	}
	if len(rep.Tables) != 5 {
		t.Fatal("Select changed the report it was given")
	}
}
