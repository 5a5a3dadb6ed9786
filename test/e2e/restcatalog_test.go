package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/offsetcheck"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/proto/restcatalog"
	"github.com/floe-io/floe/proto/restcatalog/spectest"
)

const restTestToken = "rest-test-token-0123456789"

// TestRESTCatalogServed reads a table that a real node wrote through the
// node's Iceberg REST endpoint with iceberg-go's REST client: list, load,
// scan and count; strong reads; refused writes and missing tokens; every
// response checked against the OpenAPI spec.
func TestRESTCatalogServed(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(3, "orders")})
	const records = 3000
	var vals []string
	for i := range records {
		if i%500 == 7 {
			vals = append(vals, `{"broken":`) // dead letters make a second table
			continue
		}
		vals = append(vals, fmt.Sprintf(`{"id":%d,"sku":"s%d"}`, i, i%17))
	}
	testnode.Produce(t, cl, "orders", vals, 3)
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "orders", Namespace: "shop"}})
	cfg.Auth.Tokens = restTestToken
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	testnode.WaitRows(t, n, "shop.orders", records, time.Minute)

	ctx := context.Background()
	uri := "http://" + n.AdminAddr() + restcatalog.MountPath
	if _, err := rest.NewCatalog(ctx, "floe", uri); err == nil {
		t.Fatal("the endpoint let a client without a token in")
	}
	sc := spectest.New(t)
	cat, err := rest.NewCatalog(ctx, "floe", uri, rest.WithOAuthToken(restTestToken),
		rest.WithCustomTransport(sc.Transport(t, nil, restcatalog.MountPath)),
		rest.WithAdditionalProps(map[string]string{"header." + restcatalog.ConsistencyHeader: "strong"}))
	if err != nil {
		t.Fatal(err)
	}
	nss, err := cat.ListNamespaces(ctx, nil)
	if err != nil || len(nss) != 1 || nss[0][0] != "shop" {
		t.Fatalf("namespaces %v %v", nss, err)
	}
	var names []string
	for id, err := range cat.ListTables(ctx, table.Identifier{"shop"}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.Join(id, "."))
	}
	if !slices.Equal(names, []string{"shop.orders", "shop.orders_dlq"}) {
		t.Fatalf("tables %v", names)
	}
	var rows int64
	for _, name := range []string{"orders", "orders_dlq"} {
		tbl, err := cat.LoadTable(ctx, table.Identifier{"shop", name})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := n.Catalog().MetadataLocation(table.Identifier{"shop", name})
		if tbl.MetadataLocation() != want {
			t.Fatalf("%s: REST metadata location %s, catalog of record %s", name, tbl.MetadataLocation(), want)
		}
		_, got, err := offsetcheck.Counts(ctx, tbl) // scans through the loaded table's FileIO
		if err != nil {
			t.Fatal(err)
		}
		rows += got
	}
	if rows != records {
		t.Fatalf("scanned %d rows through the REST catalog, want %d", rows, records)
	}
	// The endpoint does not advertise writes, so the client refuses
	// before asking; the server's own refusal is checked below.
	if err := cat.DropTable(ctx, table.Identifier{"shop", "orders"}); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("drop through REST: %v", err)
	}
	if _, err := cat.LoadTable(ctx, table.Identifier{"shop", "nope"}); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("missing table: %v", err)
	}
	// A write with a token is refused as forbidden, without one as
	// unauthorized.
	for _, c := range []struct {
		token string
		want  int
	}{{restTestToken, http.StatusForbidden}, {"", http.StatusUnauthorized}} {
		req, _ := http.NewRequest(http.MethodDelete, uri+"/v1/floe/namespaces/shop/tables/orders", nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Fatalf("DELETE with token %q: %d, want %d", c.token, resp.StatusCode, c.want)
		}
	}
	// Health stays open.
	resp, err := http.Get("http://" + n.AdminAddr() + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
}
