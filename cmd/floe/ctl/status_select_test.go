package ctl

import (
	"testing"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

func TestTableSelection(t *testing.T) {
	tables := []*adminv1.TableStatus{
		{Table: "db.clicks", State: "RUNNING"}, {Table: "db.orders", State: "DEGRADED"},
		{Table: "ops.orders_eu", State: "DEGRADED"}, {Table: "ops.logs", State: "RUNNING"},
	}
	for _, c := range []struct {
		sel     tableSelection
		want    []string
		matched int
		query   string
	}{
		{tableSelection{}, []string{"db.clicks", "db.orders", "ops.orders_eu", "ops.logs"}, 4, ""},
		{tableSelection{state: "degraded"}, []string{"db.orders", "ops.orders_eu"}, 2, "state=degraded"},
		{tableSelection{match: "ORDERS", limit: 1}, []string{"db.orders"}, 2, "limit=1&q=ORDERS"},
		{tableSelection{state: "FAILED"}, nil, 0, "state=FAILED"},
	} {
		got, matched := c.sel.pick(tables)
		var names []string
		for _, t := range got {
			names = append(names, t.GetTable())
		}
		if len(names) != len(c.want) || matched != c.matched {
			t.Errorf("%+v: %v (%d matched), want %v (%d)", c.sel, names, matched, c.want, c.matched)
			continue
		}
		for i := range names {
			if names[i] != c.want[i] {
				t.Errorf("%+v: %v, want %v", c.sel, names, c.want)
			}
		}
		if q := c.sel.query().Encode(); q != c.query {
			t.Errorf("%+v: query %q, want %q", c.sel, q, c.query)
		}
	}
}
