package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/admin"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/internal/testing/deltaview"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/restcatalog"
	"github.com/floe-io/floe/sinks/glue/gluetest"
)

// TestDeltaOnlyTable: a [delta] table is published only as Delta. Its
// Delta log holds exactly the produced (partition, offset)s, read back by
// the independent reader; it has a Glue Delta entry and no Glue Iceberg
// entry, is neither listed nor loaded by the node's Iceberg REST endpoint,
// and its status shows formats [delta] and only the glue-delta catalog.
// A mapping turned from [iceberg, delta] to [delta] loses its Iceberg
// entries (Glue and the endpoint) and keeps its Delta log, with no offset
// lost or repeated across the switch.
func TestDeltaOnlyTable(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	fake := gluetest.New(t)
	kc, cl := testKafka(t, []kfake.Opt{kfake.SeedTopics(2, "only", "both")})
	dir := t.TempDir()
	cfg := testConfig(t, dir, kc.ListenAddrs(), []config.Table{{Topic: "only", Namespace: "shop", Formats: []string{config.FormatDelta}}})
	cfg.CommitInterval = config.Duration(200 * time.Millisecond)
	cfg.Catalogs.Glue = config.Glue{Enabled: true, Region: "eu-west-1", Endpoint: fake.URL, SkipArchive: true}
	cfg.Catalogs.SyncInterval = config.Duration(200 * time.Millisecond)
	cfg.Auth.Tokens = restTestToken
	n, err := startNode(context.Background(), cfg, testLogger(t), true)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	ctx := context.Background()
	both := admin.Mapping{Name: "both", Table: config.Table{Topic: "both", Namespace: "shop", Format: "json", ErrorMode: "dlq",
		StartOffset: "earliest", Formats: []string{config.FormatIceberg, config.FormatDelta}}}
	if _, err := n.PutMapping(ctx, both, true); err != nil {
		t.Fatal(err)
	}
	produced := map[string]int64{}
	batch := func(topic string, k int) {
		var vals []string
		for i := range k {
			vals = append(vals, fmt.Sprintf(`{"id":%d}`, produced[topic]+int64(i)))
		}
		produce(t, cl, topic, vals, 2)
		produced[topic] += int64(k)
		waitRows(t, n, "shop."+topic, produced[topic], time.Minute)
	}
	batch("only", 300)
	batch("both", 200)
	wait.Until(t, time.Minute, "glue entries", func() error {
		for _, name := range []string{"only_delta", "both", "both_delta"} {
			if _, ok := fake.Table("shop", name); !ok {
				return fmt.Errorf("no glue entry %s", name)
			}
		}
		return nil
	})
	if _, ok := fake.Table("shop", "only"); ok {
		t.Fatal("the [delta] table has a glue iceberg entry")
	}
	cat, err := rest.NewCatalog(ctx, "floe", "http://"+n.AdminAddr()+restcatalog.MountPath, rest.WithOAuthToken(restTestToken),
		rest.WithAdditionalProps(map[string]string{"header." + restcatalog.ConsistencyHeader: "strong"}))
	if err != nil {
		t.Fatal(err)
	}
	checkServed(t, cat, []string{"shop.both"})

	// [iceberg, delta] turned [delta]: the Iceberg publication goes.
	both.Table.Formats = []string{config.FormatDelta}
	if _, err := n.PutMapping(ctx, both, false); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, time.Minute, "both's glue iceberg entry dropped", func() error {
		if _, ok := fake.Table("shop", "both"); ok {
			return errors.New("still there")
		}
		return nil
	})
	batch("both", 200)
	batch("only", 100)
	checkServed(t, cat, nil)
	if _, ok := fake.Table("shop", "both_delta"); !ok {
		t.Fatal("the delta entry went with the iceberg one")
	}
	for _, topic := range []string{"only", "both"} {
		root := filepath.Join(dir, "warehouse", "shop", topic)
		wait.Until(t, time.Minute, topic+"'s delta log complete", func() error {
			if got := len(deltaview.Read(t, root).Rows(t, root)); int64(got) != produced[topic] {
				return fmt.Errorf("%d offsets in the delta log, want %d", got, produced[topic])
			}
			return nil
		})
		checkDeltaOffsets(t, root, produced[topic], 2)
		c := catalogRows(t, n, "shop."+topic)
		if _, ok := c["glue"]; ok || len(c) != 1 {
			t.Fatalf("%s's catalog status %+v: want glue-delta only", topic, c)
		}
		rep, _ := n.Report(ctx)
		if tr, _ := tableReport(rep, "shop."+topic); !slices.Equal(tr.Formats, []string{"delta"}) || tr.Delta == nil {
			t.Fatalf("%s's status formats %v, delta %+v", topic, tr.Formats, tr.Delta)
		}
	}
}

// checkServed fails unless the REST endpoint lists exactly want in
// namespace shop and loads none of the [delta] tables.
func checkServed(t *testing.T, cat *rest.Catalog, want []string) {
	t.Helper()
	var names []string
	for id, err := range cat.ListTables(context.Background(), table.Identifier{"shop"}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.Join(id, "."))
	}
	if !slices.Equal(names, want) {
		t.Fatalf("the REST endpoint lists %v, want %v", names, want)
	}
	for _, name := range []string{"only", "both"} {
		if slices.Contains(want, "shop."+name) {
			continue
		}
		if _, err := cat.LoadTable(context.Background(), table.Identifier{"shop", name}); !errors.Is(err, catalog.ErrNoSuchTable) {
			t.Fatalf("loading [delta] table %s through REST: %v", name, err)
		}
	}
}

// checkDeltaOffsets reads the Delta log at root independently: versions and
// commit sequences contiguous, and offsets 0..n/partitions-1 of each
// partition exactly once in its live files.
func checkDeltaOffsets(t *testing.T, root string, n int64, partitions int) {
	t.Helper()
	v := deltaview.Read(t, root)
	v.CheckContiguous(t)
	rows := v.Rows(t, root)
	for p := range partitions {
		for o := range n / int64(partitions) {
			if c := rows[fmt.Sprintf("%d/%d", p, o)]; c != 1 {
				t.Fatalf("%s: partition %d offset %d appears %d times in the delta log", root, p, o, c)
			}
		}
	}
	if int64(len(rows)) != n {
		t.Fatalf("%s: %d distinct offsets in the delta log, want %d", root, len(rows), n)
	}
}
