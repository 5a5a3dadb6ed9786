package e2e

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
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/testing/deltaview"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/proto/admin"
	"github.com/floe-io/floe/proto/restcatalog"
	"github.com/floe-io/floe/sinks/glue/gluetest"
)

// TestDeltaOnlyTable: a [delta] table is published only as Delta. Its
// Delta log holds exactly the produced (partition, offset)s, read back by
// the independent reader; it has a Glue Delta entry and no Glue Iceberg
// entry, is neither listed nor loaded by the node's Iceberg REST endpoint,
// and its status shows formats [delta] and only the glue-delta catalog.
// Switching formats rewrites no data and loses or repeats no offset:
// [iceberg, delta] turned [delta] loses its Iceberg entries (Glue and the
// endpoint) and keeps its Delta log; [iceberg] turned [delta] gets a Delta
// log from its current snapshot; [delta] turned [iceberg, delta] is an
// Iceberg table again.
func TestDeltaOnlyTable(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	f := startDeltaOnly(t)
	f.batch("only", 300)
	f.batch("both", 200)
	f.batch("ice", 100)
	f.waitGlue(true, "only_delta", "both", "both_delta", "ice")
	if _, ok := f.glue.Table("shop", "only"); ok {
		t.Fatal("the [delta] table has a glue iceberg entry")
	}
	f.checkServed([]string{"shop.both", "shop.ice"})

	f.setFormats("both", config.FormatDelta)
	f.setFormats("ice", config.FormatDelta)
	f.waitGlue(false, "both", "ice")
	f.waitGlue(true, "ice_delta")
	f.batch("both", 200)
	f.batch("only", 100)
	f.batch("ice", 100)
	f.checkServed(nil)
	if _, ok := f.glue.Table("shop", "both_delta"); !ok {
		t.Fatal("the delta entry went with the iceberg one")
	}
	for _, topic := range []string{"only", "both", "ice"} {
		f.checkDeltaOnly(topic)
	}

	// Iceberg again: served and in Glue as before the switch.
	f.setFormats("both", config.FormatIceberg, config.FormatDelta)
	f.batch("both", 100)
	f.waitGlue(true, "both")
	f.checkServed([]string{"shop.both"})
	f.waitDeltaLog("both")
}

// deltaOnly is TestDeltaOnlyTable's node: topic only is a [delta] table of
// the configuration file, both ([iceberg, delta]) and ice ([iceberg]) are
// API mappings whose formats the test changes.
type deltaOnly struct {
	t        *testing.T
	n        *node.Node
	cl       *kgo.Client
	glue     *gluetest.Server
	cat      *rest.Catalog
	dir      string
	mappings map[string]admin.Mapping
	created  map[string]bool
	produced map[string]int64
}

func startDeltaOnly(t *testing.T) *deltaOnly {
	f := &deltaOnly{t: t, glue: fakeGlue(t), dir: t.TempDir(), mappings: map[string]admin.Mapping{}, created: map[string]bool{}, produced: map[string]int64{}}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "only", "both", "ice")})
	f.cl = cl
	cfg := testnode.Config(t, f.dir, kc.ListenAddrs(), []config.Table{{Topic: "only", Namespace: "shop", Formats: []string{config.FormatDelta}}})
	cfg.CommitInterval = config.Duration(200 * time.Millisecond)
	cfg.Catalogs.Glue = config.Glue{Enabled: true, Region: "eu-west-1", Endpoint: f.glue.URL, SkipArchive: true}
	cfg.Catalogs.SyncInterval = config.Duration(200 * time.Millisecond)
	cfg.Auth.Tokens = restTestToken
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop() })
	f.n = n
	for topic, formats := range map[string][]string{"both": {config.FormatIceberg, config.FormatDelta}, "ice": nil} {
		f.mappings[topic] = admin.Mapping{Name: topic, Table: config.Table{Topic: topic, Namespace: "shop", Format: "json", ErrorMode: "dlq", StartOffset: "earliest"}}
		f.setFormats(topic, formats...)
	}
	f.cat, err = rest.NewCatalog(context.Background(), "floe", "http://"+n.AdminAddr()+restcatalog.MountPath, rest.WithOAuthToken(restTestToken),
		rest.WithAdditionalProps(map[string]string{"header." + restcatalog.ConsistencyHeader: "strong"}))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// setFormats creates or updates topic's API mapping with formats.
func (f *deltaOnly) setFormats(topic string, formats ...string) {
	f.t.Helper()
	m := f.mappings[topic]
	m.Table.Formats = formats
	if _, err := f.n.PutMapping(context.Background(), m, !f.created[topic]); err != nil {
		f.t.Fatalf("mapping %s to formats %v: %v", topic, formats, err)
	}
	f.created[topic] = true
}

// batch produces k records to topic over two partitions and waits for them.
func (f *deltaOnly) batch(topic string, k int) {
	f.t.Helper()
	var vals []string
	for i := range k {
		vals = append(vals, fmt.Sprintf(`{"id":%d}`, f.produced[topic]+int64(i)))
	}
	testnode.Produce(f.t, f.cl, topic, vals, 2)
	f.produced[topic] += int64(k)
	testnode.WaitRows(f.t, f.n, "shop."+topic, f.produced[topic], time.Minute)
}

// waitGlue waits until each named Glue entry of database shop exists
// (present) or is gone.
func (f *deltaOnly) waitGlue(present bool, names ...string) {
	f.t.Helper()
	wait.Until(f.t, time.Minute, fmt.Sprintf("glue entries %v present %v", names, present), func() error {
		for _, name := range names {
			if _, ok := f.glue.Table("shop", name); ok != present {
				return fmt.Errorf("glue entry %s present: %v", name, ok)
			}
		}
		return nil
	})
}

// waitDeltaLog waits until topic's Delta log holds every produced offset,
// then checks it holds each exactly once.
func (f *deltaOnly) waitDeltaLog(topic string) {
	f.t.Helper()
	root := filepath.Join(f.dir, "warehouse", "shop", topic)
	wait.Until(f.t, time.Minute, topic+"'s delta log complete", func() error {
		if got := len(deltaview.Read(f.t, root).Rows(f.t, root)); int64(got) != f.produced[topic] {
			return fmt.Errorf("%d offsets in the delta log, want %d", got, f.produced[topic])
		}
		return nil
	})
	checkDeltaOffsets(f.t, root, f.produced[topic], 2)
}

// checkDeltaOnly checks a [delta] table: its Delta log complete, its
// status formats [delta] with a Delta version and glue-delta its only
// catalog.
func (f *deltaOnly) checkDeltaOnly(topic string) {
	f.t.Helper()
	f.waitDeltaLog(topic)
	if c := catalogRows(f.t, f.n, "shop."+topic); len(c) != 1 || c["glue-delta"].Catalog == "" {
		f.t.Fatalf("%s's catalog status %+v: want glue-delta only", topic, c)
	}
	rep, _ := f.n.Report(context.Background())
	if tr, _ := tableReport(rep, "shop."+topic); !slices.Equal(tr.Formats, []string{"delta"}) || tr.Delta == nil {
		f.t.Fatalf("%s's status formats %v, delta %+v", topic, tr.Formats, tr.Delta)
	}
}

// checkServed fails unless the REST endpoint lists exactly want in
// namespace shop and loads none of the other tables.
func (f *deltaOnly) checkServed(want []string) {
	t, cat := f.t, f.cat
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
	for _, name := range []string{"only", "both", "ice"} {
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
