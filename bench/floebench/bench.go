package floebench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/embedded"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/profiling"
	"github.com/floe-io/floe/internal/records"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
	sinkapi "github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/ingest"
	"github.com/floe-io/floe/worker/source"
)

// Command is `floe bench`, run by `make bench`: end-to-end throughput
// against the raw limit of the same decode and Parquet work, in one run.
func Command() *cobra.Command {
	var (
		n, partitions, snapshots, hour             int
		profile, memprofile, format                string
		health, clusterMode, memoryMode            bool
		nodes, perPart, deltaPasses, parquetPasses int
		memCounts, memBudget                       string
		kb                                         *kafkaBench
		tb                                         *tablesBench
		upsertPasses, upKeys, upCount              int
	)
	cmd := &cobra.Command{
		Use:    "bench",
		Short:  "Measure end-to-end throughput against the raw decode+Parquet limit",
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stopProfiles, err := startBenchProfiles(profile, memprofile)
			if err != nil {
				return err
			}
			defer stopProfiles()
			if tb.tables > 0 {
				if !cmd.Flags().Changed("nodes") {
					nodes = 1
				}
				return tb.run(cmd.Context(), cmd.OutOrStdout(), nodes, kb.interval, kb.brokers) // bench_tables.go
			}
			if kb.brokers != "" {
				return kb.run(cmd.Context(), cmd.OutOrStdout(), n) // bench_kafka.go
			}
			if health {
				return runHealthBench(cmd.Context(), cmd.OutOrStdout(), snapshots, hour)
			}
			if memoryMode {
				if !cmd.Flags().Changed("per-partition") {
					perPart = 20
				}
				return runMemoryBenchFlags(cmd.Context(), cmd.OutOrStdout(), memCounts, memBudget, perPart) // bench_memory.go
			}
			if clusterMode {
				if !cmd.Flags().Changed("partitions") {
					partitions = 1000
				}
				return runClusterBench(cmd.Context(), cmd.OutOrStdout(), nodes, partitions, perPart)
			}
			if upsertPasses > 0 {
				return runUpsertBench(cmd.Context(), cmd.OutOrStdout(), upKeys, upCount, partitions, upsertPasses) // bench_upsert.go
			}
			if parquetPasses > 0 {
				return runParquetBench(cmd.Context(), cmd.OutOrStdout(), n, parquetPasses) // bench_parquet.go
			}
			if format == "avro" {
				return runAvroBench(cmd.Context(), cmd.OutOrStdout(), n, partitions) // bench_avro.go
			}
			return runBench(cmd.Context(), cmd.OutOrStdout(), n, partitions, deltaPasses)
		},
	}
	kb = addKafkaBenchFlags(cmd)
	tb = addTablesBenchFlags(cmd)
	cmd.Flags().IntVar(&n, "records", 1_000_000, "records (with --brokers: per backlog topic)")
	cmd.Flags().IntVar(&partitions, "partitions", 8, "partitions")
	cmd.Flags().StringVar(&profile, "cpuprofile", "", "write a CPU profile of the whole run here")
	cmd.Flags().BoolVar(&health, "health", false, "measure table health instead: commit latency vs history, compaction")
	cmd.Flags().IntVar(&snapshots, "snapshots", 10000, "commits of history for the latency measurement (with --health)")
	cmd.Flags().IntVar(&hour, "hour-seconds", 3600, "1-second commits in the simulated hour (with --health)")
	cmd.Flags().BoolVar(&clusterMode, "cluster", false, "measure a cluster of real floe processes instead: memory and records/s per node, failover time")
	cmd.Flags().IntVar(&nodes, "nodes", 3, "nodes (with --cluster; with --tables, default 1)")
	cmd.Flags().BoolVar(&memoryMode, "memory", false, "measure one real floe process's resident memory instead, idle and under load, per partition count")
	cmd.Flags().StringVar(&memCounts, "memory-partitions", "1000,5000", "partition counts (with --memory)")
	cmd.Flags().StringVar(&memBudget, "memory-budget", "64MiB", "the node's memory_budget (with --memory)")
	cmd.Flags().IntVar(&perPart, "per-partition", 300, "backlog records per partition (with --cluster; --partitions defaults to 1000)")
	cmd.Flags().StringVar(&memprofile, "memprofile", "", "write a heap profile at the end here")
	cmd.Flags().IntVar(&deltaPasses, "delta-passes", 1, "end-to-end passes per table format, [iceberg] and [iceberg, delta] alternating on the same records (0: [iceberg] only); the fastest of each is reported")
	cmd.Flags().IntVar(&upsertPasses, "upsert-passes", 0, "measure an upsert table against an append table instead: passes of each, alternating on the same keyed records, then the key index's size and rebuild")
	cmd.Flags().IntVar(&upKeys, "upsert-keys", 100_000, "distinct Kafka keys (with --upsert-passes; the issue's full size: 1000000)")
	cmd.Flags().IntVar(&upCount, "upsert-updates", 500_000, "records, updates of those keys in turn (with --upsert-passes; the issue's full size: 10000000)")
	cmd.Flags().IntVar(&parquetPasses, "parquet-passes", 0, "measure the Parquet settings matrix instead: passes of --records through the sink's write under each cell's table properties")
	cmd.Flags().StringVar(&format, "format", "json", "record format: json, or avro (registry wire format, in-process registry)")
	return cmd
}

// startBenchProfiles starts the CPU profile of `floe bench --cpuprofile`;
// the returned stop ends it and writes the heap profile of --memprofile.
func startBenchProfiles(profile, memprofile string) (func(), error) {
	stopCPU := func() {}
	if profile != "" {
		stop, err := profiling.StartCPU(profile)
		if err != nil {
			return nil, err
		}
		stopCPU = stop
	}
	return func() {
		stopCPU()
		if memprofile == "" {
			return
		}
		if f, err := os.Create(memprofile); err == nil {
			runtime.GC()
			_ = pprof.WriteHeapProfile(f)
			f.Close()
		}
	}, nil
}

// benchRecord is a JSON object of about 500 bytes.
func benchRecord(i int) string {
	return fmt.Sprintf(`{"order_id":%d,"customer_id":"cust-%08d","status":"%s","amount":%d.%02d,"currency":"EUR",`+
		`"items":[{"sku":"sku-%06d","qty":%d,"price":%d.99},{"sku":"sku-%06d","qty":%d,"price":%d.49}],`+
		`"shipping":{"name":"Customer %d","street":"%d Long Street Name","city":"Berlin","zip":"%05d","country":"DE","express":%t},`+
		`"created_at":"2026-11-29T12:%02d:%02d.%03dZ","note":"%s"}`,
		i, i%100000, []string{"new", "paid", "shipped", "delivered"}[i%4], i%1000, i%100, i%999999, 1+i%5, i%200, (i*7)%999999, 1+i%3, i%50,
		i, i%999, i%99999, i%2 == 0, i%60, i%60, i%1000, strings.Repeat("x", 60+i%20))
}

func runBench(ctx context.Context, out io.Writer, n, partitions, deltaPasses int) error {
	dir, log, cleanup, err := benchScratch("floe-bench")
	if err != nil {
		return err
	}
	defer cleanup()
	values := make([][]byte, n)
	var bytes int64
	for i := range n {
		values[i] = []byte(benchRecord(i))
		bytes += int64(len(values[i]))
	}
	fmt.Fprintf(out, "floe bench: %d JSON records, %.0f bytes each on average, %d partitions, GOMAXPROCS=%d\n\n", n, float64(bytes)/float64(n), partitions, runtime.GOMAXPROCS(0))

	// 1. The raw limit: decode and Parquet-encode the same records in a
	// tight loop through the same code, no Kafka, no Raft, no commits.
	rawDur, err := benchRaw(ctx, dir, log, values)
	if err != nil {
		return fmt.Errorf("raw limit: %w", err)
	}

	// 2. End to end: records already in Kafka, one node from start until
	// every record is committed.
	e2e, fetchDur, files, err := benchEndToEnd(ctx, dir, log, values, partitions, deltaPasses)
	if err != nil {
		return fmt.Errorf("end to end: %w", err)
	}
	rows := []benchRow{
		{"raw limit (decode + Parquet encode, 1 loop)", rawDur},
		{"fetch only (franz-go from in-process kfake)", fetchDur},
	}
	if e2e.delta > 0 {
		rows = append(rows, benchRow{"end to end, formats [iceberg, delta]", e2e.delta})
	}
	printBenchRows(out, n, bytes, files, append(rows, benchRow{"end to end (kfake -> floe -> Iceberg)", e2e.iceberg}))
	e2e.print(out)
	return nil
}

// benchScratch makes the temporary directory of one bench run (cleanup
// removes it) and the logger its nodes write to: discarded, the bench
// prints its own figures.
func benchScratch(name string) (dir string, log *slog.Logger, cleanup func(), err error) {
	dir, err = os.MkdirTemp("", name)
	if err != nil {
		return "", nil, nil, err
	}
	return dir, slog.New(slog.NewTextHandler(io.Discard, nil)), func() { os.RemoveAll(dir) }, nil
}

// rawSinkNode is a scratch node that maps no topic, for the benches that
// drive a sink of their own over its Raft and catalog (--health, the
// Parquet matrix); done stops the node and the broker and removes the dir.
func rawSinkNode(ctx context.Context, name, id string, opts ...node.Option) (n *node.Node, sink *icebergsink.Sink, done func(), err error) {
	dir, log, cleanup, err := benchScratch(name)
	if err != nil {
		return nil, nil, nil, err
	}
	kafka, err := embedded.StartKafka(0) // no topics: the node maps none
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	n, err = startBenchNode(ctx, dir, id, log, kafka.Addrs(), nil, "", opts...)
	if err != nil {
		kafka.Close()
		cleanup()
		return nil, nil, nil, err
	}
	done = func() { n.Stop(); kafka.Close(); cleanup() }
	return n, icebergsink.New(n.Catalog(), 128<<20, log, nil), done, nil
}

// benchRow is one measurement of a bench over all its records.
type benchRow struct {
	label string
	dur   time.Duration
}

// printBenchRows prints the throughput of n records of bytes in all per
// row, then the ratio of the last row (end to end) to the first (the raw
// limit).
func printBenchRows(out io.Writer, n int, bytes, files int64, rows []benchRow) {
	mb := float64(bytes) / 1e6
	fmt.Fprintf(out, "%-44s %12s %10s %8s\n", "", "records/s", "MB/s", "seconds")
	for _, r := range rows {
		s := r.dur.Seconds()
		fmt.Fprintf(out, "%-44s %12.0f %10.1f %8.2f\n", r.label, float64(n)/s, mb/s, s)
	}
	raw, e2e := rows[0].dur, rows[len(rows)-1].dur
	fmt.Fprintf(out, "\nratio end-to-end / raw limit: %.2f   (data files committed: %d)\n", raw.Seconds()/e2e.Seconds(), files)
}

// startBenchNode starts a one-node group in dir through the node builder,
// on the given brokers, mapping tables (decoded through the registry at
// registryURL when not empty). The raw benches map none: they use only its
// Raft and catalog, with a sink of their own.
func startBenchNode(ctx context.Context, dir, id string, log *slog.Logger, brokers []string, tables []config.Table, registryURL string, opts ...node.Option) (*node.Node, error) {
	raftAddr, err := embedded.FreeAddr()
	if err != nil {
		return nil, err
	}
	return newNode(ctx, benchConfig(dir, id, raftAddr, brokers, tables, registryURL), log, opts...)
}

// benchConfig is the configuration of startBenchNode's node id in dir on
// raftAddr; a bench that restarts a node keeps it (the same data dir and
// Raft address).
func benchConfig(dir, id, raftAddr string, brokers []string, tables []config.Table, registryURL string) config.Config {
	cfg := config.Defaults()
	cfg.Node.ID, cfg.Node.DataDir, cfg.Node.RaftAddr, cfg.Node.AdminAddr, cfg.Node.RPCAddr = id, filepath.Join(dir, id+"-node"), raftAddr, "127.0.0.1:0", "127.0.0.1:0"
	cfg.Kafka.BootstrapServers = brokers
	cfg.Warehouse.Location = "file://" + filepath.Join(dir, id+"-wh")
	cfg.Tables = tables
	cfg.SchemaRegistry.URL = registryURL
	// A 1 s commit interval bounds the idle tail after the last record;
	// flushes during the run are triggered by the target file size.
	cfg.CommitInterval = config.Duration(time.Second)
	return cfg
}

// waitBenchRows waits until the node's first table holds want rows and
// returns how long that took since start and its data files.
func waitBenchRows(ctx context.Context, n *node.Node, want int64, start time.Time) (time.Duration, int64, error) {
	for {
		rep, err := n.Report(ctx)
		if err != nil {
			return 0, 0, err
		}
		if len(rep.Tables) > 0 && rep.Tables[0].Rows == want {
			return time.Since(start), rep.Tables[0].DataFiles, nil
		}
		if time.Since(start) > 10*time.Minute {
			return 0, 0, fmt.Errorf("not done after 10 minutes: %+v", rep)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// benchRawLimit times decoding values and encoding them as Parquet, in
// batches of 100,000 through a sink of its own: the raw limit, without
// Kafka, Raft entries or commits. Its node maps nothing (the bench uses only
// its Raft and catalog). prepare creates the table bench.raw with the
// columns of the values (outside the timing) and returns how to decode one
// into its record, as a fetcher and its pipeline would.
func benchRawLimit(ctx context.Context, dir string, log *slog.Logger, format string, values [][]byte,
	prepare func(*icebergsink.Sink, sinkapi.TableSpec) (func([]byte, *records.Record) error, error)) (time.Duration, error) {
	kafka, err := embedded.StartKafka(0) // no topics: the raw node maps none
	if err != nil {
		return 0, err
	}
	defer kafka.Close()
	n, err := startBenchNode(ctx, dir, "raw", log, kafka.Addrs(), nil, "", node.WithNoSync())
	if err != nil {
		return 0, err
	}
	defer n.Stop()
	sink := icebergsink.New(n.Catalog(), 128<<20, log, nil)
	spec := sinkapi.TableSpec{Key: "bench\x1fraw", Ident: []string{"bench", "raw"}, Format: format}
	decode, err := prepare(sink, spec)
	if err != nil {
		return 0, err
	}
	const batch = 100_000
	start := time.Now()
	for i := 0; i < len(values); i += batch {
		recs := make([]*records.Record, 0, batch)
		for j := i; j < min(i+batch, len(values)); j++ {
			r := &records.Record{Topic: "raw", Partition: int32(j % 8), Offset: int64(j), Timestamp: start, Key: values[j][:12]}
			if err := decode(values[j], r); err != nil {
				return 0, err
			}
			recs = append(recs, r)
		}
		if _, err := sink.Write(ctx, spec, uuid.NewString(), recs); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

func benchRaw(ctx context.Context, dir string, log *slog.Logger, values [][]byte) (time.Duration, error) {
	return benchRawLimit(ctx, dir, log, "json", values, func(sink *icebergsink.Sink, spec sinkapi.TableSpec) (func([]byte, *records.Record) error, error) {
		shape := &records.Shape{Kind: records.Struct}
		if _, err := ingest.DecodeJSON(shape, values[0]); err != nil {
			return nil, err
		}
		if err := sink.Prepare(ctx, spec, shape); err != nil {
			return nil, err
		}
		shape.MarkCommitted()
		lim := records.Limits{}.WithDefaults()
		return func(v []byte, r *records.Record) (err error) {
			if ingest.FitsJSON(shape, v, lim) { // kept as fetched, as Floe keeps it
				r.JSON = v
				return nil
			}
			r.Value, err = ingest.DecodeJSON(shape, v)
			return err
		}, nil
	})
}

// produceBench writes values to the topic bench in batches of 5,000: value
// j to partition j mod partitions, under key(j).
func produceBench(ctx context.Context, kafka *embedded.Kafka, values [][]byte, partitions int, key func(j int) []byte) error {
	cl, err := kafka.Producer(kgo.DefaultProduceTopic("bench"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(8<<20))
	if err != nil {
		return err
	}
	defer cl.Close()
	const batch = 5000
	for i := 0; i < len(values); i += batch {
		var recs []*kgo.Record
		for j := i; j < min(i+batch, len(values)); j++ {
			recs = append(recs, &kgo.Record{Partition: int32(j % partitions), Key: key(j), Value: values[j]})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return err
		}
	}
	return nil
}

// consumeBench starts a node that maps the topic bench to the table
// bench.e2e and waits until the table holds want rows: how long that took
// from the node's start, and the data files.
func consumeBench(ctx context.Context, dir string, log *slog.Logger, brokers []string, table config.Table, registryURL string, want int) (time.Duration, int64, error) {
	return consumeBenchAs(ctx, dir, "e2e", log, brokers, table, registryURL, want)
}

// consumeBenchAs is consumeBench with a node (and warehouse) of its own
// named id, so that passes over the same topic do not share a table.
func consumeBenchAs(ctx context.Context, dir, id string, log *slog.Logger, brokers []string, table config.Table, registryURL string, want int) (time.Duration, int64, error) {
	table.Topic, table.Namespace, table.Name, table.StartOffset = "bench", "bench", "e2e", "earliest"
	start := time.Now()
	n, err := startBenchNode(ctx, dir, id, log, brokers, []config.Table{table}, registryURL)
	if err != nil {
		return 0, 0, err
	}
	defer n.Stop()
	return waitBenchRows(ctx, n, int64(want), start)
}

func benchEndToEnd(ctx context.Context, dir string, log *slog.Logger, values [][]byte, partitions, deltaPasses int) (formatRuns, time.Duration, int64, error) {
	kafka, err := embedded.StartKafka(partitions, "bench")
	if err != nil {
		return formatRuns{}, 0, 0, err
	}
	defer kafka.Close()
	if err := produceBench(ctx, kafka, values, partitions, func(j int) []byte { return values[j][:12] }); err != nil {
		return formatRuns{}, 0, 0, err
	}
	fetchDur, err := benchFetch(ctx, kafka.Addrs(), len(values), partitions)
	if err != nil {
		return formatRuns{}, 0, 0, err
	}
	runs, files, err := benchFormatPasses(ctx, dir, log, kafka.Addrs(), len(values), deltaPasses) // bench_delta.go
	return runs, fetchDur, files, err
}

// benchFetch reads every record once with the same kafka-go readers Floe
// uses, and nothing else: the cost of the Kafka side alone.
func benchFetch(ctx context.Context, brokers []string, n, partitions int) (time.Duration, error) {
	kc, err := source.NewKafkaClient(config.Kafka{BootstrapServers: brokers, ClientID: "floe-bench"})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	errc := make(chan error, partitions)
	per := n / partitions
	for p := range partitions {
		go func() {
			r := kc.NewReader(ledger.TopicPartition{Topic: "bench", Partition: int32(p)}, 0, 16<<20, nil)
			defer r.Close()
			for range per {
				if _, err := r.Read(ctx); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	for range partitions {
		if err := <-errc; err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}
