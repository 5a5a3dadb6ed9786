package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/node"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
	"github.com/floe-io/floe/status"
)

func demoCmd() *cobra.Command {
	var (
		dir        string
		records    int
		partitions int
		rate       int
		formats    []string
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run Floe end to end on embedded defaults: in-process Kafka, local warehouse, one node",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), cmd.OutOrStdout(), dir, records, partitions, rate, formats)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "demo-data", "directory for the warehouse and node data (emptied first)")
	cmd.Flags().IntVar(&records, "records", 60000, "records to produce")
	cmd.Flags().IntVar(&partitions, "partitions", 4, "partitions of the sample topic")
	cmd.Flags().IntVar(&rate, "rate", 5000, "records produced per second")
	cmd.Flags().StringSliceVar(&formats, "formats", nil, "table formats of demo.orders: iceberg (default), delta, or iceberg,delta (a Delta log over the same files)")
	return cmd
}

// handedOut holds the addresses freeAddr has returned: the kernel may give a
// port that was listened on and closed again to the next listener, and the
// nodes started together (a demo, a bench's cluster, a test fleet) must not
// be handed the same port before any of them binds it.
var handedOut = struct {
	sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// freeAddr returns a loopback address with a port nothing listens on now and
// that this process has not handed out before.
func freeAddr() (string, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		addr := l.Addr().String()
		l.Close()
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr, nil
		}
	}
	return "", fmt.Errorf("no free loopback port not handed out already after 100 tries")
}

func runDemo(ctx context.Context, out io.Writer, dir string, total, partitions, rate int, formats []string) error {
	const topic = "orders"
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(abs); err != nil {
		return fmt.Errorf("emptying %s: %w", abs, err)
	}
	kafka, err := startEmbeddedKafka(partitions, topic)
	if err != nil {
		return err
	}
	defer kafka.Close()
	cfg, err := demoConfig(abs, topic, kafka.Addrs(), formats)
	if err != nil {
		return err
	}
	logf, err := demoLogFile(abs)
	if err != nil {
		return err
	}
	defer logf.Close()
	log := slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelInfo}))

	fmt.Fprintf(out, "Floe demo: in-process Kafka at %s, topic %q with %d partitions\n", kafka.Addrs()[0], topic, partitions)
	fmt.Fprintf(out, "warehouse %s, node log %s\n\n", cfg.Warehouse.Location, logf.Name())
	n, err := newNode(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer n.Stop()

	cl, err := kafka.producer(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	var produced, bad atomic.Int64
	prodErr := make(chan error, 1)
	go func() { prodErr <- produceOrders(ctx, cl, total, rate, &produced, &bad) }()
	if err := watchDemo(ctx, out, n, &produced, prodErr, total, rate); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n\n")
	return demoSummary(ctx, out, n, produced.Load(), bad.Load())
}

// demoConfig is the demo node's configuration: one node on the embedded
// broker, a local warehouse under abs, the sample topic mapped (in the
// given formats; nil is the default, Iceberg).
func demoConfig(abs, topic string, brokers []string, formats []string) (config.Config, error) {
	raftAddr, err := freeAddr()
	if err != nil {
		return config.Config{}, err
	}
	cfg := config.Defaults()
	cfg.Node.ID = "demo-1"
	cfg.Node.DataDir = filepath.Join(abs, "node")
	cfg.Node.RaftAddr = raftAddr
	cfg.Node.AdminAddr = "127.0.0.1:0"
	cfg.Kafka.BootstrapServers = brokers
	cfg.Warehouse.Location = "file://" + filepath.Join(abs, "warehouse")
	cfg.CommitInterval = config.Duration(2 * time.Second)
	cfg.Tables = []config.Table{{Topic: topic, Namespace: "demo", Name: topic, Format: "json", ErrorMode: "dlq", StartOffset: "earliest", Formats: formats}}
	if err := cfg.Validate(); err != nil {
		return config.Config{}, err
	}
	return cfg, nil
}

// demoLogFile creates the node's log file in abs (and abs if needed).
func demoLogFile(abs string) (*os.File, error) {
	logf, err := os.Create(filepath.Join(abs, "floe.log"))
	if err == nil {
		return logf, nil
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	return os.Create(filepath.Join(abs, "floe.log"))
}

// watchDemo prints progress every second until the producer is done and
// every produced record is committed (rows plus dead letters), or the
// deadline passes.
func watchDemo(ctx context.Context, out io.Writer, n *node.Node, produced *atomic.Int64, prodErr <-chan error, total, rate int) error {
	start := time.Now()
	// On a terminal the progress line rewrites itself; in a log it repeats.
	tty := false
	if f, ok := out.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	deadline := time.Now().Add(time.Duration(total/max(rate, 1))*time.Second + 90*time.Second)
	producing := true
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-prodErr:
			if err != nil {
				return fmt.Errorf("producing: %w", err)
			}
			producing = false
		case <-tick.C:
		}
		rep, err := n.Report(ctx)
		if err != nil {
			return err
		}
		var rows, dlq, lag int64
		state := "PENDING"
		for _, t := range rep.Tables {
			rows += t.Rows
			dlq += t.DeadLetterRows
			state = t.State
			for _, p := range t.Partitions {
				lag += p.Lag
			}
		}
		line := fmt.Sprintf("[%5.1fs] produced %6d  committed rows %6d  dead-lettered %3d  lag %6d  %-9s", time.Since(start).Seconds(), produced.Load(), rows, dlq, lag, state)
		if tty {
			fmt.Fprint(out, "\r"+line)
		} else {
			fmt.Fprintln(out, line)
		}
		if !producing && rows+dlq == produced.Load() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out: %d of %d records committed", rows+dlq, produced.Load())
		}
	}
}

func produceOrders(ctx context.Context, cl *kgo.Client, total, rate int, produced, bad *atomic.Int64) error {
	const batch = 500
	interval := time.Duration(float64(time.Second) * batch / float64(max(rate, 1)))
	for i := 0; i < total; i += batch {
		var recs []*kgo.Record
		for j := i; j < min(i+batch, total); j++ {
			var v string
			switch {
			case j%5000 == 4999:
				v = fmt.Sprintf("order %d was not JSON", j) // malformed: goes to the dead-letter table
				bad.Add(1)
			case j < total/2:
				v = fmt.Sprintf(`{"order_id":%d,"customer":"c-%d","amount":%d.%02d,"items":[{"sku":"sku-%d","qty":%d}],"shipping":{"country":"%s","express":%t}}`,
					j, j%997, 10+j%90, j%100, j%50, 1+j%3, []string{"DE", "FR", "US", "JP"}[j%4], j%2 == 0)
			default: // a field appears halfway: the table gains a column
				v = fmt.Sprintf(`{"order_id":%d,"customer":"c-%d","amount":%d.%02d,"items":[{"sku":"sku-%d","qty":%d}],"shipping":{"country":"%s","express":%t},"coupon":"SPRING%d"}`,
					j, j%997, 10+j%90, j%100, j%50, 1+j%3, []string{"DE", "FR", "US", "JP"}[j%4], j%2 == 0, j%10)
			}
			recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprintf("c-%d", j%997)), Value: []byte(v),
				Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("floe-demo")}}})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return err
		}
		produced.Add(int64(len(recs)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
	return nil
}

func demoSummary(ctx context.Context, out io.Writer, n *node.Node, produced, bad int64) error {
	rep, err := n.Report(ctx)
	if err != nil {
		return err
	}
	if err := status.WriteText(out, rep); err != nil {
		return err
	}
	fmt.Fprintln(out)
	ident := []string{"demo", "orders"}
	tbl, err := n.Catalog().LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	counts, rows, err := offsetCounts(ctx, tbl)
	if err != nil {
		return err
	}
	dlqTbl, err := n.Catalog().LoadTable(ctx, icebergsink.DLQIdent(ident))
	var dlqRows int64
	if err == nil {
		if _, dlqRows, err = offsetCounts(ctx, dlqTbl); err != nil {
			return err
		}
	}
	dups := 0
	for _, offs := range counts {
		for _, c := range offs {
			if c > 1 {
				dups++
			}
		}
	}
	offsets, _ := icebergsink.Offsets(tbl.CurrentSnapshot())
	keys := make([]string, 0, len(offsets))
	for k := range offsets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var offs []string
	for _, k := range keys {
		offs = append(offs, fmt.Sprintf("%s=%d", k, offsets[k]))
	}
	var files int
	if tasks, err := tbl.Scan().PlanFiles(ctx); err == nil {
		files = len(tasks)
	}
	fmt.Fprintf(out, "Table demo.orders, read back with iceberg-go's scanner:\n")
	fmt.Fprintf(out, "  rows                  %d (+ %d in demo.orders_dlq) of %d produced (%d malformed)\n", rows, dlqRows, produced, bad)
	fmt.Fprintf(out, "  duplicate offsets     %d\n", dups)
	fmt.Fprintf(out, "  data files            %d\n", files)
	fmt.Fprintf(out, "  snapshots             %d\n", len(tbl.Metadata().Snapshots()))
	fmt.Fprintf(out, "  columns               %s\n", columnNames(tbl))
	fmt.Fprintf(out, "  committed offsets     %s (floe.offsets in the current snapshot summary)\n", strings.Join(offs, " "))
	fmt.Fprintf(out, "  metadata              %s\n\n", tbl.MetadataLocation())
	meta := strings.TrimPrefix(tbl.MetadataLocation(), "file://")
	fmt.Fprintf(out, "Query it with PyIceberg (pip install 'pyiceberg[pyarrow]'):\n")
	fmt.Fprintf(out, "  python3 -c \"from pyiceberg.table import StaticTable; t = StaticTable.from_metadata('%s'); print(t.scan().to_arrow().num_rows)\"\n", tbl.MetadataLocation())
	fmt.Fprintf(out, "or with DuckDB:\n")
	fmt.Fprintf(out, "  duckdb -c \"INSTALL iceberg; LOAD iceberg; SELECT _kafka_partition, count(*) FROM iceberg_scan('%s') GROUP BY 1 ORDER BY 1\"\n", meta)
	if root := strings.TrimPrefix(tbl.Location(), "file://"); dirExists(filepath.Join(root, "_delta_log")) {
		fmt.Fprintf(out, "It is a Delta table too (--formats), over the same files; read it with delta-rs (pip install deltalake):\n")
		fmt.Fprintf(out, "  python3 -c \"from deltalake import DeltaTable; t = DeltaTable('%s'); print(t.version(), t.to_pyarrow_table().num_rows)\"\n", root)
	}
	if rows+dlqRows != produced || dups > 0 {
		return fmt.Errorf("exactly-once check failed: %d rows + %d dead letters for %d produced, %d duplicates", rows, dlqRows, produced, dups)
	}
	fmt.Fprintf(out, "\nExactly once: every produced offset is in demo.orders or demo.orders_dlq, once.\n")
	return nil
}

func columnNames(tbl *table.Table) string {
	var names []string
	for _, f := range tbl.Schema().Fields() {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// dirExists reports whether path is a directory.
func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
