package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/node"
	"github.com/floe-io/floe/records"
	"github.com/floe-io/floe/schemas"
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
	reg := startEmbeddedRegistry()
	defer reg.Close()
	values, bytes, err := reg.orderAvroValues("bench-value", n)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "floe bench --format avro: %d Avro records, %.0f bytes each on average, %d partitions, GOMAXPROCS=%d\n\n", n, float64(bytes)/float64(n), partitions, runtime.GOMAXPROCS(0))
	rawDur, err := benchAvroRaw(ctx, dir, log, reg.URL(), values)
	if err != nil {
		return fmt.Errorf("raw limit: %w", err)
	}
	e2eDur, files, err := benchAvroEndToEnd(ctx, dir, log, reg.URL(), values, partitions)
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
	kafka, err := startEmbeddedKafka(0) // no topics: the raw node maps none
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
	kafka, err := startEmbeddedKafka(partitions, "bench")
	if err != nil {
		return 0, 0, err
	}
	defer kafka.Close()
	cl, err := kafka.producer(kgo.DefaultProduceTopic("bench"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(8<<20))
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
	tables := []config.Table{{Topic: "bench", Namespace: "bench", Name: "e2e", Format: "avro", ErrorMode: "log", StartOffset: "earliest"}}
	start := time.Now()
	n, err := startBenchNode(ctx, dir, "e2e", log, kafka.Addrs(), tables, url)
	if err != nil {
		return 0, 0, err
	}
	defer n.Stop()
	return waitBenchRows(ctx, n, int64(len(values)), start)
}
