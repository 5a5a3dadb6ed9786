package restcatalog

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// TestHidesTablesNotPublishedAsIceberg: a table Options.Hide names (a
// [delta] table) is left out of the listing and answers 404
// NoSuchTableException to load and exists, like a missing table; the
// others are served as before.
func TestHidesTablesNotPublishedAsIceberg(t *testing.T) {
	srv, _ := testServer(t, Options{Hide: func(id table.Identifier) bool {
		return slices.Equal(id, table.Identifier{"sales", "refunds"})
	}})
	_, resp, body := do(t, srv, call{method: "GET", path: "/v1/floe/namespaces/sales/tables"})
	var list listTablesResponse
	if err := json.Unmarshal(body, &list); err != nil || resp.StatusCode != 200 {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
	var got []string
	for _, id := range list.Identifiers {
		got = append(got, id.Name)
	}
	if want := []string{"orders", "orders_dlq", "returns"}; !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	for _, c := range []call{
		{method: "GET", path: "/v1/floe/namespaces/sales/tables/refunds", want: 404, errType: "NoSuchTableException"},
		{method: "HEAD", path: "/v1/floe/namespaces/sales/tables/refunds", want: 404},
		{method: "GET", path: "/v1/floe/namespaces/sales/tables/returns", want: 200},
	} {
		_, resp, body := do(t, srv, c)
		if resp.StatusCode != c.want {
			t.Fatalf("%s %s = %d, want %d: %s", c.method, c.path, resp.StatusCode, c.want, body)
		}
		if c.errType != "" && (!strings.Contains(string(body), c.errType) || !strings.Contains(string(body), "Delta")) {
			t.Fatalf("%s %s: body %s, want %s saying why", c.method, c.path, body, c.errType)
		}
	}
}
