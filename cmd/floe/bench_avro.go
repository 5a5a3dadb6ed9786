package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cluster"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/records"
	"github.com/floe-io/floe/schemas"
	"github.com/floe-io/floe/schemas/registrytest"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
	sinkapi "github.com/floe-io/floe/sinks/sink"
)

// runAvroBench is `floe bench --format avro`: the JSON bench's order record
// as Avro in the Confluent wire format, with an in-process registry; raw
// limit (registry decode + Parquet) against end to end.
func runAvroBench(ctx context.Context, out io.Writer, n, partitions int) error {
	dir, err := os.MkdirTemp("", "floe-bench-avro")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := registrytest.New()
	defer reg.Close()
	id := reg.Register("bench-value", "AVRO", registrytest.OrderAvro)
	values := make([][]byte, n)
	var bytes int64
	for i := range n {
		p, err := registrytest.Avro(registrytest.OrderAvro, registrytest.OrderAvroValue(i))
		if err != nil {
			return err
		}
		values[i] = registrytest.Frame(id, nil, p)
		bytes += int64(len(values[i]))
	}
	fmt.Fprintf(out, "floe bench --format avro: %d Avro records, %.0f bytes each on average, %d partitions, GOMAXPROCS=%d\n\n", n, float64(bytes)/float64(n), partitions, runtime.GOMAXPROCS(0))
	rawDur, err := benchAvroRaw(ctx, dir, log, reg.URL, values)
	if err != nil {
		return fmt.Errorf("raw limit: %w", err)
	}
	e2eDur, files, err := benchAvroEndToEnd(ctx, dir, log, reg.URL, values, partitions)
	if err != nil {
		return fmt.Errorf("end to end: %w", err)
	}
	mb := float64(bytes) / 1e6
	fmt.Fprintf(out, "%-44s %12s %10s %8s\n", "", "records/s", "MB/s", "seconds")
	fmt.Fprintf(out, "%-44s %12.0f %10.1f %8.2f\n", "raw limit (Avro decode + Parquet, 1 loop)", float64(n)/rawDur.Seconds(), mb/rawDur.Seconds(), rawDur.Seconds())
	fmt.Fprintf(out, "%-44s %12.0f %10.1f %8.2f\n", "end to end (kfake -> floe -> Iceberg)", float64(n)/e2eDur.Seconds(), mb/e2eDur.Seconds(), e2eDur.Seconds())
	fmt.Fprintf(out, "\nratio end-to-end / raw limit: %.2f   (data files committed: %d)\n", rawDur.Seconds()/e2eDur.Seconds(), files)
	return nil
}

func benchAvroRaw(ctx context.Context, dir string, log *slog.Logger, url string, values [][]byte) (time.Duration, error) {
	raftAddr, err := freeAddr()
	if err != nil {
		return 0, err
	}
	node, err := cluster.Open(cluster.NodeConfig{ID: "raw", RaftAddr: raftAddr, DataDir: filepath.Join(dir, "raw-node"), BootstrapExpect: 1, NoSync: true, Logger: log})
	if err != nil {
		return 0, err
	}
	defer node.Close()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := node.WaitLeader(wctx); err != nil {
		return 0, err
	}
	for !node.IsLeader() {
		time.Sleep(10 * time.Millisecond)
	}
	cat := cluster.NewCatalog(node, "file://"+filepath.Join(dir, "raw-wh"), iceberg.Properties{})
	sink := icebergsink.New(cat, 128<<20, log, nil)
	dec := schemas.NewDecoder(schemas.NewRegistry(schemas.RegistryConfig{URL: url}))
	spec := sinkapi.TableSpec{Key: "bench\x1fraw", Ident: []string{"bench", "raw"}, Format: "avro"}
	first, err := dec.Value(ctx, "avro", "", values[0])
	if err != nil {
		return 0, err
	}
	shape := first.Shape.Clone()
	if err := sink.Prepare(ctx, spec, shape); err != nil {
		return 0, err
	}
	const batch = 100_000
	start := time.Now()
	for i := 0; i < len(values); i += batch {
		recs := make([]*records.Record, 0, batch)
		for j := i; j < min(i+batch, len(values)); j++ {
			d, err := dec.Value(ctx, "avro", "", values[j])
			if err != nil {
				return 0, err
			}
			recs = append(recs, &records.Record{Topic: "raw", Partition: int32(j % 8), Offset: int64(j), Timestamp: start, Key: values[j][:12], Value: d.Value})
		}
		if _, err := sink.Write(ctx, spec, uuid.NewString(), recs); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

func benchAvroEndToEnd(ctx context.Context, dir string, log *slog.Logger, url string, values [][]byte, partitions int) (time.Duration, int64, error) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), "bench"))
	if err != nil {
		return 0, 0, err
	}
	defer kc.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("bench"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(8<<20))
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	const batch = 5000
	for i := 0; i < len(values); i += batch {
		var recs []*kgo.Record
		for j := i; j < min(i+batch, len(values)); j++ {
			recs = append(recs, &kgo.Record{Partition: int32(j % partitions), Key: fmt.Appendf(nil, "order-%08d", j), Value: values[j]})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return 0, 0, err
		}
	}
	raftAddr, err := freeAddr()
	if err != nil {
		return 0, 0, err
	}
	cfg := config.Defaults()
	cfg.Node.ID, cfg.Node.DataDir, cfg.Node.RaftAddr, cfg.Node.AdminAddr, cfg.Node.RPCAddr = "bench", filepath.Join(dir, "e2e-node"), raftAddr, "127.0.0.1:0", "127.0.0.1:0"
	cfg.Kafka.BootstrapServers = kc.ListenAddrs()
	cfg.Warehouse.Location = "file://" + filepath.Join(dir, "e2e-wh")
	cfg.SchemaRegistry.URL = url
	cfg.Tables = []config.Table{{Topic: "bench", Namespace: "bench", Name: "e2e", Format: "avro", ErrorMode: "log", StartOffset: "earliest"}}
	cfg.CommitInterval = config.Duration(time.Second)
	start := time.Now()
	n, err := startNode(ctx, cfg, log, false)
	if err != nil {
		return 0, 0, err
	}
	defer n.Stop()
	for {
		rep, err := n.Report(ctx)
		if err != nil {
			return 0, 0, err
		}
		if len(rep.Tables) > 0 && rep.Tables[0].Rows == int64(len(values)) {
			return time.Since(start), rep.Tables[0].DataFiles, nil
		}
		if time.Since(start) > 10*time.Minute {
			return 0, 0, fmt.Errorf("not done after 10 minutes: %+v", rep)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
