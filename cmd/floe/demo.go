package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/embedded"
)

// demoOptions are floe demo's flags.
type demoOptions struct {
	dir        string
	records    int
	partitions int
	rate       int
	formats    []string
	// serve keeps the broker, a slow producer and the node running after
	// the summary, with the console's URL and an admin token printed, until
	// SIGINT or SIGTERM.
	serve     bool
	serveRate int
}

func demoCmd() *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run Floe end to end on embedded defaults: in-process Kafka, local warehouse, one node",
		Long: "Run Floe end to end on embedded defaults: an in-process Kafka broker and producer, one node on\n" +
			"free loopback ports, a local warehouse. It ends by querying the table it wrote. With --serve it\n" +
			"keeps running, producing slowly, and prints the console's URL, an admin token and floe ctl\n" +
			"commands for this node until Ctrl-C.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A signal stops the demo cleanly (the node's Raft log closed, the
			// broker shut), and a second one kills it.
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			context.AfterFunc(ctx, stop)
			return runDemo(ctx, cmd.OutOrStdout(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "demo-data", "directory for the warehouse and node data (emptied first)")
	f.IntVar(&o.records, "records", 60000, "records to produce before the summary")
	f.IntVar(&o.partitions, "partitions", 4, "partitions of the sample topic")
	f.IntVar(&o.rate, "rate", 5000, "records produced per second")
	f.StringSliceVar(&o.formats, "formats", nil, "table formats of demo.orders: iceberg (default), delta, or iceberg,delta (a Delta log over the same files)")
	f.BoolVar(&o.serve, "serve", false, "after the summary keep the broker, a producer and the node running, and print the console URL and an admin token, until Ctrl-C")
	f.IntVar(&o.serveRate, "serve-rate", 20, "records produced per second while --serve runs")
	return cmd
}

func runDemo(ctx context.Context, out io.Writer, o demoOptions) error {
	const topic = "orders"
	abs, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(abs); err != nil {
		return fmt.Errorf("emptying %s: %w", abs, err)
	}
	kafka, err := embedded.StartKafka(o.partitions, topic)
	if err != nil {
		return err
	}
	defer kafka.Close()
	cfg, err := demoConfig(abs, topic, kafka.Addrs(), o.formats)
	if err != nil {
		return err
	}
	token, err := demoToken()
	if err != nil {
		return err
	}
	// The admin API, console and REST catalog want this token: the node is
	// on loopback, but any local user could otherwise change its mappings.
	cfg.Auth.Tokens = token + ":admin"
	logf, err := demoLogFile(abs)
	if err != nil {
		return err
	}
	defer logf.Close()
	log := slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelInfo}))

	fmt.Fprintf(out, "Floe demo: in-process Kafka at %s, topic %q with %d partitions\n", kafka.Addrs()[0], topic, o.partitions)
	fmt.Fprintf(out, "warehouse %s, node log %s\n\n", cfg.Warehouse.Location, logf.Name())
	n, err := newNode(ctx, cfg, log)
	if err != nil {
		return demoStopped(o, err)
	}
	defer n.Stop()

	cl, err := kafka.Producer(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	var produced, bad atomic.Int64
	prodErr := make(chan error, 1)
	go func() { prodErr <- produceOrders(ctx, cl, 0, o.records, o.records/2, o.rate, &produced, &bad) }()
	if err := watchDemo(ctx, out, n, &produced, prodErr, o.records, o.rate); err != nil {
		return demoStopped(o, err)
	}
	fmt.Fprintf(out, "\n\n")
	if err := demoSummary(ctx, out, n, produced.Load(), bad.Load()); err != nil || !o.serve {
		return demoStopped(o, err)
	}
	return serveDemo(ctx, out, n, cl, token, o, &produced, &bad) // demo_serve.go
}

// demoStopped is err, unless a signal stopped a --serve demo: then the
// stop is what was asked for, and the exit is clean.
func demoStopped(o demoOptions, err error) error {
	if o.serve && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// demoConfig is the demo node's configuration: one node on the embedded
// broker, a local warehouse under abs, the sample topic mapped (in the
// given formats; nil is the default, Iceberg). Every listener takes a free
// loopback port, so the demo runs beside a node on the default ports.
func demoConfig(abs, topic string, brokers []string, formats []string) (config.Config, error) {
	raftAddr, err := embedded.FreeAddr()
	if err != nil {
		return config.Config{}, err
	}
	// The admin port is chosen here, not bound to :0, because the node
	// advertises it (status's leader_admin_addr) as configured.
	adminAddr, err := embedded.FreeAddr()
	if err != nil {
		return config.Config{}, err
	}
	cfg := config.Defaults()
	cfg.Node.ID = "demo-1"
	cfg.Node.DataDir = filepath.Join(abs, "node")
	cfg.Node.RaftAddr = raftAddr
	cfg.Node.AdminAddr = adminAddr
	cfg.Node.RPCAddr = "127.0.0.1:0" // the node advertises the port it got
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
