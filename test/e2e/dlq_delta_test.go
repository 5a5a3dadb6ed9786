package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/testing/deltaview"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/proto/restcatalog"
)

// TestDeadLetterTableOfDeltaOnlyTable: the dead-letter table of a [delta]
// table follows it: its dead letters are in a Delta log of its own (read
// back by the independent reader, each once), Glue has its Delta entry
// <table>_dlq_delta and no Iceberg entry, and the node's Iceberg REST
// endpoint does not list it, while an [iceberg] table's dead-letter table
// stays an Iceberg table with no Delta log.
func TestDeadLetterTableOfDeltaOnlyTable(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	fake := fakeGlue(t)
	dir := t.TempDir()
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(1, "only", "ice")})
	cfg := testnode.Config(t, dir, kc.ListenAddrs(), []config.Table{
		{Topic: "only", Namespace: "shop", Formats: []string{config.FormatDelta}},
		{Topic: "ice", Namespace: "shop"},
	})
	cfg.CommitInterval = config.Duration(200 * time.Millisecond)
	cfg.Catalogs.Glue = config.Glue{Enabled: true, Region: "eu-west-1", Endpoint: fake.URL, SkipArchive: true}
	cfg.Catalogs.SyncInterval = config.Duration(200 * time.Millisecond)
	cfg.Auth.Tokens = restTestToken
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	vals := []string{`{"id":0}`, "not json", `{"id":2}`, "{broken", `{"id":4}`}
	for _, topic := range []string{"only", "ice"} {
		testnode.Produce(t, cl, topic, vals, 1)
		testnode.WaitRows(t, n, "shop."+topic, int64(len(vals)), time.Minute)
	}
	wait.Until(t, time.Minute, "the glue entries", func() error {
		for _, name := range []string{"only_delta", "only_dlq_delta", "ice", "ice_dlq"} {
			if _, ok := fake.Table("shop", name); !ok {
				return fmt.Errorf("no glue entry %s", name)
			}
		}
		return nil
	})
	for _, name := range []string{"only", "only_dlq", "ice_delta", "ice_dlq_delta"} {
		if _, ok := fake.Table("shop", name); ok {
			t.Fatalf("glue entry %s: the table is not published in that format", name)
		}
	}
	wh := filepath.Join(dir, "warehouse", "shop")
	root := filepath.Join(wh, "only_dlq")
	v := deltaview.Read(t, root)
	v.CheckContiguous(t)
	if rows := v.Rows(t, root); len(rows) != 2 || rows["0/1"] != 1 || rows["0/3"] != 1 {
		t.Fatalf("the dead-letter table's delta log holds %v, want offsets 1 and 3 of partition 0 once", rows)
	}
	// The committer shows the dead-letter log's version it last mirrored:
	// the log's newest, once a commit after the last dead letter's ran.
	wait.Until(t, time.Minute, "the dead-letter delta version in the status", func() error {
		tr := nodeTable(t, n, "shop.only")
		last := deltaview.Read(t, root).Versions
		if tr.DeadLetterDeltaVersion == nil || *tr.DeadLetterDeltaVersion != last[len(last)-1] {
			return fmt.Errorf("status shows dead-letter delta version %v, the log's newest is %d", tr.DeadLetterDeltaVersion, last[len(last)-1])
		}
		return nil
	})
	if tr := nodeTable(t, n, "shop.ice"); tr.DeadLetterDeltaVersion != nil {
		t.Fatalf("an [iceberg] table shows dead-letter delta version %d", *tr.DeadLetterDeltaVersion)
	}
	if got := deltaview.Read(t, filepath.Join(wh, "ice_dlq")).Versions; len(got) != 0 {
		t.Fatalf("an [iceberg] table's dead-letter table has delta versions %v", got)
	}
	cat, err := rest.NewCatalog(context.Background(), "floe", "http://"+n.AdminAddr()+restcatalog.MountPath, rest.WithOAuthToken(restTestToken),
		rest.WithAdditionalProps(map[string]string{"header." + restcatalog.ConsistencyHeader: "strong"}))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for id, err := range cat.ListTables(context.Background(), table.Identifier{"shop"}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.Join(id, "."))
	}
	if want := []string{"shop.ice", "shop.ice_dlq"}; !slices.Equal(names, want) {
		t.Fatalf("the REST endpoint lists %v, want %v", names, want)
	}
}
