package floebench

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/embedded"
	"github.com/floe-io/floe/internal/status"
)

// tablesBench is `floe bench --tables N`: N mostly quiet tables (one topic
// of two partitions each, one topic_regex mapping) fed a steady trickle of
// small JSON records, on an in-process S3 that counts what is written. It
// measures what a deployment of many tables pays per table: CPU, memory,
// commits, freshness, metadata bytes and object requests per table-hour,
// the data dir's growth and how long the status endpoints take (issue 38).
type tablesBench struct {
	tables   int
	rate     int // records per second per table
	warmup   time.Duration
	steady   time.Duration
	interval time.Duration
	nodes    int
	brokers  string // a real broker's bootstrap servers; kfake when empty
	nodeBin  string // the floe binary the nodes run; this one when empty
	profile  string // node-1's CPU profile, written when the bench ends
	heap     string // node-1's heap profile, written when the bench ends
	idle     bool   // stop producing once every table committed

	out    io.Writer
	cb     *clusterBench
	s3     *countingS3
	topics []string
	sent   atomic.Int64
	failed atomic.Int64
}

// addTablesBenchFlags registers the flags of `floe bench --tables`.
func addTablesBenchFlags(cmd *cobra.Command) *tablesBench {
	tb := &tablesBench{}
	f := cmd.Flags()
	f.IntVar(&tb.tables, "tables", 0, "measure N quiet tables instead: CPU, memory, commits, freshness, metadata bytes and requests per table-hour (with --nodes, --brokers)")
	f.IntVar(&tb.rate, "table-rate", 20, "records/s produced to each table (with --tables)")
	f.DurationVar(&tb.warmup, "tables-warmup", time.Minute, "time after every table committed before the steady window (with --tables)")
	f.DurationVar(&tb.steady, "tables-steady", 5*time.Minute, "the steady window measured (with --tables)")
	f.StringVar(&tb.profile, "tables-cpuprofile", "", "write node-1's CPU profile of the whole run here (with --tables)")
	f.StringVar(&tb.heap, "tables-memprofile", "", "write node-1's heap profile at the end of the run here (with --tables)")
	f.BoolVar(&tb.idle, "tables-idle", false, "stop producing once every table committed: the steady window measures idle tables (with --tables; give a warm-up past compaction.cool_down)")
	f.StringVar(&tb.nodeBin, "tables-node-bin", "", "the floe binary the nodes run, to compare two builds (with --tables; default this one)")
	return tb
}

// tablesSample is one steady-window reading.
type tablesSample struct {
	at      time.Time
	cpu     float64 // CPU seconds of every node so far
	rss     []int64 // per node
	s3      map[string]objectCounts
	commits int64
	dataDir int64
	raft    []raftReading // per node
}

func (tb *tablesBench) run(ctx context.Context, out io.Writer, nodes int, interval time.Duration, brokers string) error {
	tb.out, tb.nodes, tb.interval, tb.brokers = out, nodes, interval, brokers
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	if tb.nodeBin != "" {
		bin = tb.nodeBin
	}
	dir, err := os.MkdirTemp("", "floe-tbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	prefix := fmt.Sprintf("tb%d_", time.Now().Unix()%100000)
	for i := range tb.tables {
		tb.topics = append(tb.topics, fmt.Sprintf("%s%04d", prefix, i))
	}
	cl, closeKafka, err := tb.startKafka(ctx)
	if err != nil {
		return err
	}
	defer closeKafka()
	defer cl.Close()
	if tb.s3, err = startCountingS3("lake"); err != nil {
		return err
	}
	defer tb.s3.Close()
	tb.cb = &clusterBench{out: out, nodes: nodes, dir: dir, bin: bin, brokers: tb.brokerList(cl)}
	tb.cb.configure = tb.nodeConfig(prefix)
	var args []string
	if tb.profile != "" {
		args = append(args, "--cpuprofile", tb.profile)
	}
	if tb.heap != "" {
		args = append(args, "--memprofile", tb.heap)
	}
	tb.cb.args = map[string][]string{"node-1": args}
	fmt.Fprintf(out, "floe bench --tables %d: %d node(s), 2 partitions per table, %d records/s per table of ~200 B JSON, commit interval %s, %s warm-up, %s measured; broker %s\n\n",
		tb.tables, nodes, tb.rate, interval, tb.warmup, tb.steady, tb.brokerName())
	pctx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	prodCtx, stopProducing := context.WithCancel(ctx)
	var pwg sync.WaitGroup
	pwg.Add(1)
	go func() { defer pwg.Done(); tb.produce(prodCtx, cl) }()
	defer func() { stopProducing(); pwg.Wait() }()
	start := time.Now()
	if err := tb.cb.startNodes(nil); err != nil {
		return err
	}
	defer tb.stopNodes()
	go tb.cb.sampleMemory(pctx)
	if err := tb.waitAllCommitted(ctx, start); err != nil {
		return err
	}
	if tb.idle {
		// Every table has data and a committer: now nothing more comes,
		// and the steady window (after the warm-up) counts what idle
		// tables still cost.
		stopProducing()
		pwg.Wait()
		fmt.Fprintln(out, "producing stopped: the tables are idle from here")
	}
	return tb.measure(ctx)
}

func (tb *tablesBench) brokerName() string {
	if tb.brokers == "" {
		return "kfake (in process)"
	}
	return tb.brokers
}

// startKafka creates the topics (on kfake, or on the real broker) and
// returns a producer to them.
func (tb *tablesBench) startKafka(ctx context.Context) (*kgo.Client, func(), error) {
	opts := []kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(20 * time.Millisecond)}
	if tb.brokers == "" {
		k, err := embedded.StartKafka(2, tb.topics...)
		if err != nil {
			return nil, nil, err
		}
		cl, err := k.Producer(opts...)
		if err != nil {
			k.Close()
			return nil, nil, err
		}
		return cl, k.Close, nil
	}
	cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(strings.Split(tb.brokers, ",")...))...)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range tb.topics {
		if err := createTopic(ctx, cl, t, 2); err != nil {
			cl.Close()
			return nil, nil, err
		}
	}
	return cl, func() {}, nil
}

func (tb *tablesBench) brokerList(cl *kgo.Client) []string {
	if tb.brokers != "" {
		return strings.Split(tb.brokers, ",")
	}
	return cl.OptValue(kgo.SeedBrokers).([]string)
}

// nodeConfig is what every node's configuration adds to clusterBench's:
// one mapping for every bench topic, the counting S3 warehouse.
func (tb *tablesBench) nodeConfig(prefix string) func(cfg map[string]any) {
	return func(cfg map[string]any) {
		cfg["tables"] = []map[string]any{{"topic_regex": "^" + prefix + "[0-9]+$", "namespace": "bench", "format": "json", "start_offset": "earliest"}}
		cfg["warehouse"] = map[string]any{"location": "s3://lake/wh", "s3": map[string]any{
			"endpoint": tb.s3.URL(), "region": "us-east-1", "access_key_id": "bench", "secret_access_key": "bench"}}
		cfg["commit_interval"] = tb.interval.String()
	}
}

// produce sends rate records a second to every table, half to each
// partition, paced by the clock so that a slow wake-up catches up.
func (tb *tablesBench) produce(ctx context.Context, cl *kgo.Client) {
	start := time.Now()
	sent := 0 // rounds: one record to every table each
	for ctx.Err() == nil {
		due := int(time.Since(start).Seconds() * float64(tb.rate))
		for ; sent < due && ctx.Err() == nil; sent++ {
			for _, t := range tb.topics {
				v := fmt.Appendf(nil, `{"id":%d,"at":%d,"user":"user-%06d","kind":"click","page":"/products/%d","amount":%d.%02d,"agent":"Mozilla/5.0 (X11; Linux x86_64)","ok":true}`,
					sent, time.Now().UnixMilli(), sent%100000, sent%977, sent%1000, sent%100)
				cl.Produce(ctx, &kgo.Record{Topic: t, Partition: int32(sent % 2), Value: v}, func(_ *kgo.Record, err error) {
					if err != nil && ctx.Err() == nil {
						tb.failed.Add(1)
					}
				})
				tb.sent.Add(1)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitAllCommitted polls until every table has committed rows.
func (tb *tablesBench) waitAllCommitted(ctx context.Context, start time.Time) error {
	for {
		rep, err := tb.cb.status(ctx)
		if err == nil && committedTables(rep, tb.tables) {
			fmt.Fprintf(tb.out, "every table committed %.1f s after the nodes started\n", time.Since(start).Seconds())
			return nil
		}
		if time.Since(start) > 10*time.Minute {
			return fmt.Errorf("not every table committed after 10 minutes (%d of %d; %v)", countCommitted(rep), tb.tables, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func committedTables(rep status.Report, want int) bool { return countCommitted(rep) >= want }

func countCommitted(rep status.Report) int {
	n := 0
	for _, t := range rep.Tables {
		if t.Rows > 0 && !strings.HasSuffix(t.Table, "_dlq") {
			n++
		}
	}
	return n
}

// stopNodes ends the nodes with SIGTERM, so that a CPU profile is
// written, and kills what has not stopped after 30 s.
func (tb *tablesBench) stopNodes() {
	for _, p := range tb.cb.procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		p.alive.Store(false) // stopAll then only waits
	}
	done := make(chan struct{})
	go func() { tb.cb.stopAll(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		for _, p := range tb.cb.procs {
			_ = p.cmd.Process.Kill()
		}
		<-done
	}
}

// sample reads the nodes' CPU and memory, the store's counts, the
// commits so far and the data dirs' size.
func (tb *tablesBench) sample() tablesSample {
	s := tablesSample{at: time.Now(), s3: tb.s3.snapshot(), dataDir: dirSize(tb.cb.dir, "node-")}
	for _, p := range tb.cb.procs {
		s.cpu += procCPU(p.cmd.Process.Pid)
		s.rss = append(s.rss, readRSS(p.cmd.Process.Pid))
	}
	// Each catalog commit writes one metadata.json: the store counts
	// them whether or not a status read is answered in time.
	s.commits = s.s3[kindMetadataJSON].Put
	s.raft = tb.readRaft(context.Background())
	return s
}

// dirSize sums the sizes of the files under dir's entries named prefix*.
func dirSize(dir, prefix string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		_ = filepath.WalkDir(filepath.Join(dir, e.Name()), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if info, err := d.Info(); err == nil {
					n += info.Size()
				}
			}
			return nil
		})
	}
	return n
}
