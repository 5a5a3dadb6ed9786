package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/offsetcheck"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
)

// TestPipeline runs one node against an in-process Kafka with three topics:
// 200,000 records over 8 partitions, a topic whose records gain a field
// halfway, and a topic with malformed records.
func TestPipeline(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(8, "events"), kfake.SeedTopics(1, "growth"), kfake.SeedTopics(3, "mixed")}, kgo.ProducerBatchMaxBytes(4<<20))

	const events = 200_000
	var ev []string
	for i := range events {
		ev = append(ev, fmt.Sprintf(`{"id":%d,"user":"u%d","score":%d.5,"tags":["a","b"],"geo":{"lat":%d.25,"lon":2.5}}`, i, i%1000, i%100, i%90))
	}
	var growth []string
	for i := range 1000 {
		if i < 500 {
			growth = append(growth, fmt.Sprintf(`{"a":%d}`, i))
		} else {
			growth = append(growth, fmt.Sprintf(`{"a":%d,"b":"new-%d","nested":{"c":%d}}`, i, i, i))
		}
	}
	mixed := []string{}
	bad := 0
	for i := range 3000 {
		switch i % 100 {
		case 7:
			mixed = append(mixed, `[1,2,3]`)
			bad++
		case 19:
			mixed = append(mixed, `{"broken":`)
			bad++
		case 42:
			mixed = append(mixed, `{"v":"type conflict"}`)
			bad++
		default:
			mixed = append(mixed, fmt.Sprintf(`{"v":%d}`, i))
		}
	}
	testnode.Produce(t, cl, "events", ev, 8)
	testnode.Produce(t, cl, "growth", growth[:500], 1)
	testnode.Produce(t, cl, "mixed", mixed, 3)

	dir := t.TempDir()
	cfg := testnode.Config(t, dir, kc.ListenAddrs(), []config.Table{
		{Topic: "events", Namespace: "e2e", Name: "events"},
		{Topic: "growth", Namespace: "e2e", Name: "growth"},
		{Topic: "mixed", Namespace: "e2e", Name: "mixed"},
	})
	ctx := context.Background()
	n, err := testnode.Start(ctx, cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()

	testnode.WaitRows(t, n, "e2e.growth", 500, time.Minute)
	testnode.Produce(t, cl, "growth", growth[500:], 1)

	t.Run("200k records over 8 partitions exactly once", func(t *testing.T) {
		testnode.WaitRows(t, n, "e2e.events", events, 4*time.Minute)
		tbl, err := n.Catalog().LoadTable(ctx, []string{"e2e", "events"})
		if err != nil {
			t.Fatal(err)
		}
		per := map[int32]int64{}
		for p := range int32(8) {
			per[p] = events / 8
		}
		testnode.CheckExactlyOnce(t, []*table.Table{tbl}, "events", per)
		offs, err := icebergsink.Offsets(tbl.CurrentSnapshot())
		if err != nil {
			t.Fatal(err)
		}
		for p := range 8 {
			if got := offs[fmt.Sprintf("events/%d", p)]; got != events/8 {
				t.Fatalf("snapshot summary floe.offsets events/%d = %d", p, got)
			}
		}
		// A transient reader error (kafka-go retries it) may show for up
		// to two discovery intervals; the table must come back RUNNING.
		rep := waitReport(t, n, "events RUNNING", func(r status.Report) bool {
			tr, _ := tableReport(r, "e2e.events")
			return tr.State == "RUNNING"
		})
		for _, tr := range rep.Tables {
			if tr.Table == "e2e.events" {
				if tr.State != "RUNNING" || tr.DataFiles == 0 || tr.Snapshots == 0 || len(tr.Partitions) != 8 {
					t.Fatalf("status %+v", tr)
				}
				for _, p := range tr.Partitions {
					if p.Committed != events/8 || p.Lag != 0 {
						t.Fatalf("partition status %+v", p)
					}
				}
			}
		}
	})

	t.Run("schema growth adds columns, older rows read null", func(t *testing.T) {
		testnode.WaitRows(t, n, "e2e.growth", 1000, time.Minute)
		tbl, err := n.Catalog().LoadTable(ctx, []string{"e2e", "growth"})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := tbl.Schema().FindFieldByName("b"); !ok {
			t.Fatalf("column b missing: %s", tbl.Schema())
		}
		if _, ok := tbl.Schema().FindFieldByName("nested.c"); !ok {
			t.Fatalf("column nested.c missing: %s", tbl.Schema())
		}
		_, batches, err := tbl.Scan(table.WithSelectedFields(icebergsink.ColOffset, "a", "b")).ToArrowRecords(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for b, err := range batches {
			if err != nil {
				t.Fatal(err)
			}
			off := b.Column(b.Schema().FieldIndices(icebergsink.ColOffset)[0]).(*array.Int64)
			bs := b.Column(b.Schema().FieldIndices("b")[0]).(*array.String)
			for i := range int(b.NumRows()) {
				seen++
				if o := off.Value(i); o < 500 && !bs.IsNull(i) {
					t.Fatalf("offset %d has b=%q, want null", o, bs.Value(i))
				} else if o >= 500 && bs.Value(i) != fmt.Sprintf("new-%d", o) {
					t.Fatalf("offset %d has b=%q", o, bs.Value(i))
				}
			}
			b.Release()
		}
		if seen != 1000 {
			t.Fatalf("read %d rows", seen)
		}
	})

	t.Run("malformed records land in the dead-letter table", func(t *testing.T) {
		testnode.WaitRows(t, n, "e2e.mixed", int64(len(mixed)), time.Minute)
		tbl, err := n.Catalog().LoadTable(ctx, []string{"e2e", "mixed"})
		if err != nil {
			t.Fatal(err)
		}
		dlq, err := n.Catalog().LoadTable(ctx, []string{"e2e", "mixed_dlq"})
		if err != nil {
			t.Fatal(err)
		}
		_, dlqRows, err := offsetcheck.Counts(ctx, dlq)
		if err != nil {
			t.Fatal(err)
		}
		if dlqRows != int64(bad) {
			t.Fatalf("dead letters = %d, want %d", dlqRows, bad)
		}
		testnode.CheckExactlyOnce(t, []*table.Table{tbl, dlq}, "mixed", map[int32]int64{0: 1000, 1: 1000, 2: 1000})
		_, batches, err := dlq.Scan(table.WithSelectedFields(icebergsink.ColError, icebergsink.ColValue)).ToArrowRecords(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var reasons []string
		for b, err := range batches {
			if err != nil {
				t.Fatal(err)
			}
			errs := b.Column(b.Schema().FieldIndices(icebergsink.ColError)[0]).(*array.String)
			vals := b.Column(b.Schema().FieldIndices(icebergsink.ColValue)[0]).(*array.Binary)
			for i := range int(b.NumRows()) {
				reasons = append(reasons, errs.Value(i))
				if len(vals.Value(i)) == 0 {
					t.Fatal("dead letter lost its value")
				}
			}
			b.Release()
		}
		joined := strings.Join(reasons, "\n")
		for _, want := range []string{"not a JSON object", "invalid JSON", "field v: column is long, value is a string"} {
			if !strings.Contains(joined, want) {
				t.Fatalf("no dead letter says %q:\n%s", want, joined)
			}
		}
	})
}
