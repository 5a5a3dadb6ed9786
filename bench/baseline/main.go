package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"
	"github.com/segmentio/kafka-go"
)

func main() {
	var (
		brokers   = flag.String("brokers", "127.0.0.1:9092", "Kafka bootstrap servers, comma-separated")
		topic     = flag.String("topic", "bench", "topic to read, every partition from the first offset")
		warehouse = flag.String("warehouse", "", "file:// warehouse of the Hadoop catalog")
		ident     = flag.String("table", "bench.baseline", "namespace.table")
		interval  = flag.Duration("interval", 10*time.Second, "commit interval: one Append per interval")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, strings.Split(*brokers, ","), *topic, *warehouse, *ident, *interval); err != nil && !errors.Is(err, context.Canceled) {
		slog.Error("baseline failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, brokers []string, topic, warehouse, ident string, interval time.Duration) error {
	tbl, err := openTable(ctx, warehouse, ident)
	if err != nil {
		return err
	}
	parts, err := partitions(brokers[0], topic)
	if err != nil {
		return err
	}
	// The readers decode in parallel (one goroutine per partition); the
	// writer appends to the builders and commits, so a slow commit holds
	// the readers back through the channel.
	rows := make(chan row, 10_000)
	errc := make(chan error, len(parts)+1)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, p := range parts {
		go func() { errc <- readPartition(rctx, brokers, topic, p, rows) }()
	}
	go func() { errc <- write(rctx, tbl, rows, interval) }()
	err = <-errc
	cancel()
	return err
}

// openTable creates the namespace and table in the Hadoop catalog at
// warehouse, or loads the table when it exists.
func openTable(ctx context.Context, warehouse, ident string) (*table.Table, error) {
	cat, err := hadoop.NewCatalog("baseline", warehouse, nil)
	if err != nil {
		return nil, fmt.Errorf("opening the catalog at %s: %w", warehouse, err)
	}
	id := table.Identifier(strings.Split(ident, "."))
	if err := cat.CreateNamespace(ctx, id[:len(id)-1], nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return nil, fmt.Errorf("creating namespace of %s: %w", ident, err)
	}
	tbl, err := cat.CreateTable(ctx, id, tableSchema())
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		return cat.LoadTable(ctx, id)
	}
	if err != nil {
		return nil, fmt.Errorf("creating table %s: %w", ident, err)
	}
	return tbl, nil
}

func partitions(broker, topic string) ([]int, error) {
	conn, err := kafka.Dial("tcp", broker)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", broker, err)
	}
	defer conn.Close()
	ps, err := conn.ReadPartitions(topic)
	if err != nil {
		return nil, fmt.Errorf("reading partitions of %s: %w", topic, err)
	}
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out, nil
}

// readPartition reads one partition from its first offset and sends every
// record, decoded, to rows.
func readPartition(ctx context.Context, brokers []string, topic string, p int, rows chan<- row) error {
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p, MaxBytes: 10e6, MaxWait: 500 * time.Millisecond})
	defer r.Close()
	if err := r.SetOffset(kafka.FirstOffset); err != nil {
		return err
	}
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			return fmt.Errorf("reading %s/%d: %w", topic, p, err)
		}
		var o order
		if err := json.Unmarshal(m.Value, &o); err != nil {
			return fmt.Errorf("decoding %s/%d@%d: %w", topic, p, m.Offset, err)
		}
		select {
		case rows <- row{o: o, partition: int32(p), offset: m.Offset}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// write appends rows to Arrow builders and, every interval, appends what
// it holds to the table in one commit. It prints one line per commit.
func write(ctx context.Context, tbl *table.Table, rows <-chan row, interval time.Duration) error {
	schema, err := arrowSchema(tbl.Schema())
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var held, total int64
	for {
		select {
		case r := <-rows:
			appendRow(b, &r)
			held++
		case <-tick.C:
			if held == 0 {
				continue
			}
			rec := b.NewRecordBatch()
			tbl, err = commit(ctx, tbl, schema, rec)
			rec.Release()
			if err != nil {
				return err
			}
			total += held
			fmt.Printf("commit rows=%d total=%d snapshot=%d\n", held, total, tbl.CurrentSnapshot().SnapshotID)
			held = 0
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func commit(ctx context.Context, tbl *table.Table, schema *arrow.Schema, rec arrow.RecordBatch) (*table.Table, error) {
	rdr, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	next, err := tbl.Append(ctx, rdr, nil)
	if err != nil {
		return nil, fmt.Errorf("appending %d rows to %v: %w", rec.NumRows(), tbl.Identifier(), err)
	}
	return next, nil
}
