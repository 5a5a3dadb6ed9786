package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/embedded"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/wait"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
)

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func produce(t *testing.T, cl *kgo.Client, topic string, values []string, partitions int) {
	t.Helper()
	const batch = 2000
	for i := 0; i < len(values); i += batch {
		var recs []*kgo.Record
		for j := i; j < min(i+batch, len(values)); j++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(j % partitions), Key: []byte(fmt.Sprint("k", j)), Value: []byte(values[j])})
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// testKafka starts an in-process broker seeded with topics and a producer
// client that writes to explicit partitions; both close when the test ends.
func testKafka(t *testing.T, seeds []kfake.Opt, opts ...kgo.Opt) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	kc, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, seeds...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kc, cl
}

func testConfig(t *testing.T, dir string, brokers []string, tables []config.Table) config.Config {
	t.Helper()
	cfg := config.Defaults()
	cfg.Node.ID = "test-1"
	cfg.Node.DataDir = filepath.Join(dir, "node")
	raft, err := embedded.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := embedded.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	rpc, err := embedded.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Node.RaftAddr, cfg.Node.AdminAddr, cfg.Node.RPCAddr = raft, admin, rpc
	cfg.Kafka.BootstrapServers = brokers
	cfg.Warehouse.Location = "file://" + filepath.Join(dir, "warehouse")
	cfg.CommitInterval = config.Duration(time.Second)
	for i := range tables {
		if tables[i].Format == "" {
			tables[i].Format = "json"
		}
		if tables[i].ErrorMode == "" {
			tables[i].ErrorMode = "dlq"
		}
		tables[i].StartOffset = "earliest"
	}
	cfg.Tables = tables
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// waitRows polls the node until the tables hold want rows (main plus
// dead-letter) in total.
func waitRows(t *testing.T, n *floeNode, table string, want int64, timeout time.Duration) {
	t.Helper()
	wait.Until(t, timeout, table+" rows", func() error {
		rep, err := n.Report(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range rep.Tables {
			if tr.Table == table {
				if tr.Rows+tr.DeadLetterRows == want {
					return nil
				}
				return fmt.Errorf("%d rows + %d dead letters, want %d (state %s %s)", tr.Rows, tr.DeadLetterRows, want, tr.State, tr.Reason)
			}
		}
		return fmt.Errorf("table %s not found", table)
	})
}

// checkExactlyOnce reads the tables back with iceberg-go and checks every
// partition holds offsets 0..n-1 exactly once across them.
func checkExactlyOnce(t *testing.T, tbls []*table.Table, topic string, perPartition map[int32]int64) {
	t.Helper()
	all := offsetCountsAcross(t, tbls)
	for p, n := range perPartition {
		offs := all[fmt.Sprintf("%s/%d", topic, p)]
		var total int64
		for o, c := range offs {
			if c != 1 {
				t.Fatalf("%s/%d offset %d appears %d times", topic, p, o, c)
			}
			if o < 0 || o >= n {
				t.Fatalf("%s/%d offset %d outside 0..%d", topic, p, o, n-1)
			}
			total += int64(c)
		}
		if total != n || int64(len(offs)) != n {
			t.Fatalf("%s/%d: %d rows, %d distinct offsets, want %d", topic, p, total, len(offs), n)
		}
	}
}

// TestPipeline runs one node against an in-process Kafka with three topics:
// 200,000 records over 8 partitions, a topic whose records gain a field
// halfway, and a topic with malformed records.
func TestPipeline(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testKafka(t, []kfake.Opt{kfake.SeedTopics(8, "events"), kfake.SeedTopics(1, "growth"), kfake.SeedTopics(3, "mixed")}, kgo.ProducerBatchMaxBytes(4<<20))

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
	produce(t, cl, "events", ev, 8)
	produce(t, cl, "growth", growth[:500], 1)
	produce(t, cl, "mixed", mixed, 3)

	dir := t.TempDir()
	cfg := testConfig(t, dir, kc.ListenAddrs(), []config.Table{
		{Topic: "events", Namespace: "e2e", Name: "events"},
		{Topic: "growth", Namespace: "e2e", Name: "growth"},
		{Topic: "mixed", Namespace: "e2e", Name: "mixed"},
	})
	ctx := context.Background()
	n, err := startNode(ctx, cfg, testLogger(t), true)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()

	waitRows(t, n, "e2e.growth", 500, time.Minute)
	produce(t, cl, "growth", growth[500:], 1)

	t.Run("200k records over 8 partitions exactly once", func(t *testing.T) {
		waitRows(t, n, "e2e.events", events, 4*time.Minute)
		tbl, err := n.Catalog().LoadTable(ctx, []string{"e2e", "events"})
		if err != nil {
			t.Fatal(err)
		}
		per := map[int32]int64{}
		for p := range int32(8) {
			per[p] = events / 8
		}
		checkExactlyOnce(t, []*table.Table{tbl}, "events", per)
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
		waitRows(t, n, "e2e.growth", 1000, time.Minute)
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
		waitRows(t, n, "e2e.mixed", int64(len(mixed)), time.Minute)
		tbl, err := n.Catalog().LoadTable(ctx, []string{"e2e", "mixed"})
		if err != nil {
			t.Fatal(err)
		}
		dlq, err := n.Catalog().LoadTable(ctx, []string{"e2e", "mixed_dlq"})
		if err != nil {
			t.Fatal(err)
		}
		_, dlqRows, err := offsetCounts(ctx, dlq)
		if err != nil {
			t.Fatal(err)
		}
		if dlqRows != int64(bad) {
			t.Fatalf("dead letters = %d, want %d", dlqRows, bad)
		}
		checkExactlyOnce(t, []*table.Table{tbl, dlq}, "mixed", map[int32]int64{0: 1000, 1: 1000, 2: 1000})
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

// runAsFloe, set in a child's environment, makes the test binary run as the
// floe command (see floeCommand).
const runAsFloe = "FLOE_TEST_RUN_AS_FLOE"

func TestMain(m *testing.M) {
	if os.Getenv(runAsFloe) == "1" {
		main() // exits
	}
	code := m.Run()
	if builtBinary != "" {
		os.RemoveAll(filepath.Dir(builtBinary))
	}
	os.Exit(code)
}

// execCommand runs the real floe binary in the fleet tests.
var execCommand = exec.Command

// floeCommand runs this test binary as the floe command with args: the same
// code as the binary, without the minutes a separate build costs, for tests
// of the command line itself.
func floeCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runAsFloe+"=1")
	return cmd
}

var buildOnce sync.Once
var builtBinary string
var buildErr error

// floeBinary builds the real floe binary once per test run.
func floeBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "floe-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBinary = filepath.Join(dir, "floe")
		cmd := execCommand("go", "build", "-o", builtBinary, ".")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBinary
}

// offsetCountsAcross sums, per "topic/partition", how many times each
// offset appears across the tables (a table and its dead-letter table).
func offsetCountsAcross(t *testing.T, tbls []*table.Table) map[string]map[int64]int {
	t.Helper()
	all := map[string]map[int64]int{}
	for _, tbl := range tbls {
		counts, _, err := offsetCounts(context.Background(), tbl)
		if err != nil {
			t.Fatal(err)
		}
		for tp, offs := range counts {
			if all[tp] == nil {
				all[tp] = map[int64]int{}
			}
			for o, c := range offs {
				all[tp][o] += c
			}
		}
	}
	return all
}
