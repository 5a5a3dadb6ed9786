package floebench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/embedded"
	"github.com/floe-io/floe/internal/records"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
	sinkapi "github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/schemas"
)

// runAvroBench is `floe bench --format avro`: the JSON bench's order record
// as Avro in the Confluent wire format, with an in-process registry; raw
// limit (registry decode + Parquet) against end to end.
func runAvroBench(ctx context.Context, out io.Writer, n, partitions int) error {
	dir, log, cleanup, err := benchScratch("floe-bench-avro")
	if err != nil {
		return err
	}
	defer cleanup()
	reg := embedded.StartRegistry()
	defer reg.Close()
	values, bytes, err := reg.OrderAvroValues("bench-value", n)
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
	printBenchRows(out, n, bytes, files, []benchRow{
		{"raw limit (Avro decode + Parquet, 1 loop)", rawDur},
		{"end to end (kfake -> floe -> Iceberg)", e2eDur},
	})
	return nil
}

func benchAvroRaw(ctx context.Context, dir string, log *slog.Logger, url string, values [][]byte) (time.Duration, error) {
	dec := schemas.NewDecoder(schemas.NewRegistry(schemas.RegistryConfig{URL: url}))
	return benchRawLimit(ctx, dir, log, "avro", values, func(sink *icebergsink.Sink, spec sinkapi.TableSpec) (func([]byte, *records.Record) error, error) {
		first, err := dec.Value(ctx, "avro", "", values[0])
		if err != nil {
			return nil, err
		}
		if err := sink.Prepare(ctx, spec, first.Shape.Clone()); err != nil {
			return nil, err
		}
		return func(v []byte, r *records.Record) error {
			d, err := dec.Value(ctx, "avro", "", v)
			r.Value = d.Value
			return err
		}, nil
	})
}

func benchAvroEndToEnd(ctx context.Context, dir string, log *slog.Logger, url string, values [][]byte, partitions int) (time.Duration, int64, error) {
	kafka, err := embedded.StartKafka(partitions, "bench")
	if err != nil {
		return 0, 0, err
	}
	defer kafka.Close()
	if err := produceBench(ctx, kafka, values, partitions, func(j int) []byte { return fmt.Appendf(nil, "order-%08d", j) }); err != nil {
		return 0, 0, err
	}
	return consumeBench(ctx, dir, log, kafka.Addrs(), config.Table{Format: "avro", ErrorMode: "log"}, url, len(values))
}
