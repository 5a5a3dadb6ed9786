package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/sinks/glue/gluetest"
)

// fakeGlue starts a fake Glue for the test, with static AWS credentials
// and no instance metadata lookup in the environment.
func fakeGlue(t *testing.T) *gluetest.Server {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return gluetest.New(t)
}

// TestGlueSync mirrors a live table into a fake Glue: created with its
// database, kept current with coalesced updates, a hand edit overwritten,
// and Glue down for a while blocking no commit, shown in status, then
// caught up.
func TestGlueSync(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	fake := fakeGlue(t)
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "orders")})
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "orders", Namespace: "shop"}})
	cfg.CommitInterval = config.Duration(300 * time.Millisecond)
	cfg.Catalogs.Glue = config.Glue{Enabled: true, Region: "eu-west-1", Endpoint: fake.URL, SkipArchive: true}
	cfg.Catalogs.SyncInterval = config.Duration(time.Second)
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	ident := table.Identifier{"shop", "orders"}
	batch := func(from, count int) {
		var vals []string
		for i := from; i < from+count; i++ {
			vals = append(vals, fmt.Sprintf(`{"id":%d}`, i))
		}
		testnode.Produce(t, cl, "orders", vals, 2)
	}
	// inGlue waits until Glue points at the table's current metadata and
	// the status says so.
	inGlue := func(what string) status.CatalogReport {
		t.Helper()
		var last status.CatalogReport
		wait.Until(t, time.Minute, what+": glue in sync", func() error {
			cur, _ := n.Catalog().MetadataLocation(ident)
			tb, ok := fake.Table("shop", "orders")
			rep, _ := n.Report(context.Background())
			tr, _ := tableReport(rep, "shop.orders")
			if len(tr.Catalogs) == 1 {
				last = tr.Catalogs[0]
			}
			if ok && tb.Parameters["metadata_location"] == cur && last.InSync && last.MetadataLocation == cur {
				return nil
			}
			return fmt.Errorf("status %+v, glue calls %d", last, len(fake.Calls()))
		})
		return last
	}

	// Commits every 300 ms for a while: Glue follows with fewer updates.
	pace := time.NewTicker(300 * time.Millisecond)
	defer pace.Stop()
	for i := range 10 {
		batch(i*100, 100)
		<-pace.C
	}
	testnode.WaitRows(t, n, "shop.orders", 1000, time.Minute)
	st := inGlue("first sync")
	if st.LagSec != 0 || st.LastError != "" || st.Syncs == 0 {
		t.Fatalf("status in sync: %+v", st)
	}
	if !fake.Database("shop") {
		t.Fatal("glue database shop missing")
	}
	tb, _ := fake.Table("shop", "orders")
	if tb.TableType != "EXTERNAL_TABLE" || tb.Parameters["table_type"] != "ICEBERG" || !strings.Contains(strings.Join(colNames(tb), ","), "_kafka_offset") {
		t.Fatalf("glue entry %+v", tb)
	}
	rep, _ := n.Report(context.Background())
	tr, _ := tableReport(rep, "shop.orders")
	puts := 0
	for _, c := range fake.Calls() {
		if c == "AWSGlue.UpdateTable" || c == "AWSGlue.CreateTable" {
			puts++
		}
	}
	if int64(puts) >= tr.Commits {
		t.Fatalf("%d glue writes for %d commits: not coalesced", puts, tr.Commits)
	}
	t.Logf("%d commits mirrored with %d glue writes", tr.Commits, puts)
	// The replicated record names what was synced, so a new committer
	// resumes from it.
	var rec fsm.SyncRecord
	n.Raft().FSM().Read(func(s *fsm.State) { rec = s.Tables[ledger.TableKey(ident)].Synced["glue"] })
	if cur, _ := n.Catalog().MetadataLocation(ident); rec.MetadataLocation != cur || rec.At == 0 {
		t.Fatalf("replicated sync record %+v, current %s", rec, cur)
	}

	// A hand edit is overwritten at the next sync.
	fake.Alter("shop", "orders", map[string]string{"metadata_location": "s3://elsewhere/metadata/00001-x.metadata.json"})
	batch(1000, 100)
	testnode.WaitRows(t, n, "shop.orders", 1100, time.Minute)
	inGlue("after a hand edit")

	// Glue down: commits go on, status shows the lag and the error.
	fake.SetDown(true)
	start := time.Now()
	for i := range 8 {
		batch(1100+i*100, 100)
		<-pace.C
	}
	testnode.WaitRows(t, n, "shop.orders", 1900, time.Minute)
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("ingestion took %s with glue down", took)
	}
	var down status.CatalogReport
	waitReport(t, n, "glue error in status", func(r status.Report) bool {
		tr, _ := tableReport(r, "shop.orders")
		if len(tr.Catalogs) == 1 {
			down = tr.Catalogs[0]
		}
		return !down.InSync && down.LastError != "" && down.LagSec > 0 && down.Failures > 0
	})
	t.Logf("while glue is down: %+v", down)
	fake.SetDown(false)
	st = inGlue("after glue came back")
	if st.LastError != "" || st.LagSec != 0 {
		t.Fatalf("status after catching up: %+v", st)
	}
}

func colNames(tb gluetest.Table) []string {
	var out []string
	for _, c := range tb.Columns {
		out = append(out, c.Name)
	}
	return out
}
