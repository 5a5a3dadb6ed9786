package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
)

// TestPartitionedTable: day(_kafka_timestamp), bucket[8](_kafka_key) and
// identity(country) partition the table; a filter on country prunes files;
// the spec then changes across a restart and every row stays readable once.
// A time transform on a string column is a CONFIG_ISSUE naming the column.
func TestPartitionedTable(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(3, "p"), kfake.SeedTopics(1, "bad")})
	day1 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	per := map[int32]int64{}
	send := func(from, n int) {
		var recs []*kgo.Record
		for i := from; i < from+n; i++ {
			p := int32(i % 3)
			recs = append(recs, &kgo.Record{Topic: "p", Partition: p, Key: []byte(fmt.Sprint("k", i%50)),
				Timestamp: day1.Add(time.Duration(i%2) * 24 * time.Hour),
				Value:     []byte(fmt.Sprintf(`{"i":%d,"country":"%s","created":"2026-11-27"}`, i, []string{"DE", "FR", "JP"}[i%3]))})
			per[p]++
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	send(0, 600)
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "bad", Value: []byte(`{"created":"2026-11-27"}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tables := []config.Table{
		{Topic: "p", Namespace: "e2e", Name: "p", PartitionBy: []config.PartitionField{
			{Column: "_kafka_timestamp", Transform: "day"}, {Column: "_kafka_key", Transform: "bucket[8]"}, {Column: "country", Transform: "identity"}}},
		{Topic: "bad", Namespace: "e2e", Name: "bad", PartitionBy: []config.PartitionField{{Column: "created", Transform: "day"}}},
	}
	cfg := testnode.Config(t, dir, kc.ListenAddrs(), tables)
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	testnode.WaitRows(t, n, "e2e.p", 600, time.Minute)
	rep := waitReport(t, n, "config issue for a time transform on a string", func(r status.Report) bool {
		tr, _ := tableReport(r, "e2e.bad")
		return tr.State == "CONFIG_ISSUE"
	})
	tr, _ := tableReport(rep, "e2e.bad")
	if want := "column created is string"; !strings.Contains(tr.Reason, want) {
		t.Fatalf("reason %q lacks %q", tr.Reason, want)
	}
	tbl, err := n.Catalog().LoadTable(context.Background(), []string{"e2e", "p"})
	if err != nil {
		t.Fatal(err)
	}
	spec := tbl.Spec()
	if got := spec.NumFields(); got != 3 {
		t.Fatalf("spec has %d fields: %v", got, tbl.Spec())
	}
	all, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	de, err := tbl.Scan(table.WithRowFilter(iceberg.EqualTo(iceberg.Reference("country"), "DE"))).PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(de) == 0 || len(de) >= len(all) {
		t.Fatalf("filter on country planned %d of %d files: no pruning", len(de), len(all))
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}

	// Change the spec and restart: new data takes the new spec.
	cfg.Tables[0].PartitionBy = []config.PartitionField{{Column: "_kafka_key", Transform: "bucket[4]"}}
	cfg.Tables = cfg.Tables[:1]
	n, err = testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	send(600, 300)
	testnode.WaitRows(t, n, "e2e.p", 900, time.Minute)
	tbl, err = n.Catalog().LoadTable(context.Background(), []string{"e2e", "p"})
	if err != nil {
		t.Fatal(err)
	}
	spec = tbl.Spec()
	if len(tbl.Metadata().PartitionSpecs()) < 2 || spec.NumFields() != 1 {
		t.Fatalf("specs %v, current %v", tbl.Metadata().PartitionSpecs(), tbl.Spec())
	}
	testnode.CheckExactlyOnce(t, []*table.Table{tbl}, "p", per)
}
