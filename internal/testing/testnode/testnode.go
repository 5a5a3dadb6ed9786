package testnode

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/embedded"
	"github.com/floe-io/floe/internal/offsetcheck"
	"github.com/floe-io/floe/internal/testing/wait"
)

// Options are a test node's start-up choices that are not configuration.
type Options struct {
	NoSync  bool // no fsync of the Raft log
	Recover bool // restore the state from the warehouse backup (floe serve --recover)
	// ExpireInterval and OrphanInterval shorten the maintenance cadence;
	// 0 keeps the worker's defaults.
	ExpireInterval, OrphanInterval time.Duration
}

// Start builds and starts a node from cfg the way floe serve does
// (node.New), with opts: the one builder of every in-process test node.
func Start(ctx context.Context, cfg config.Config, log *slog.Logger, opts Options) (*node.Node, error) {
	o := []node.Option{node.WithLogger(log), node.WithRecover(opts.Recover), node.WithMaintenanceIntervals(opts.ExpireInterval, opts.OrphanInterval)}
	if opts.NoSync {
		o = append(o, node.WithNoSync())
	}
	return node.New(ctx, cfg, o...)
}

// Logger is a node's logger in a test: to stderr with -v, else discarded.
func Logger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// Produce writes values to topic, value j to partition j mod partitions
// with key kj, in batches, and fails the test on an error.
func Produce(t testing.TB, cl *kgo.Client, topic string, values []string, partitions int) {
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

// Kafka starts an in-process broker seeded with topics and a producer
// client that writes to explicit partitions; both close when the test ends.
func Kafka(t testing.TB, seeds []kfake.Opt, opts ...kgo.Opt) (*kfake.Cluster, *kgo.Client) {
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

// Config is a one-node configuration in dir on free loopback ports,
// reading brokers into tables (JSON, dead letters, from the earliest offset
// unless a table says otherwise), committing every second.
func Config(t testing.TB, dir string, brokers []string, tables []config.Table) config.Config {
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

// WaitRows polls the node until the tables hold want rows (main plus
// dead-letter) in total.
func WaitRows(t testing.TB, n *node.Node, table string, want int64, timeout time.Duration) {
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

// CheckExactlyOnce reads the tables back with iceberg-go and checks every
// partition holds offsets 0..n-1 exactly once across them.
func CheckExactlyOnce(t testing.TB, tbls []*table.Table, topic string, perPartition map[int32]int64) {
	t.Helper()
	all := OffsetCountsAcross(t, tbls)
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

// OffsetCountsAcross sums, per "topic/partition", how many times each
// offset appears across the tables (a table and its dead-letter table).
func OffsetCountsAcross(t testing.TB, tbls []*table.Table) map[string]map[int64]int {
	t.Helper()
	all := map[string]map[int64]int{}
	for _, tbl := range tbls {
		counts, _, err := offsetcheck.Counts(context.Background(), tbl)
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
