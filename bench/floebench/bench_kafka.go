package floebench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-io/floe/internal/embedded"
)

// `floe bench --brokers ADDR` (make bench-kafka, docs/benchmarks.md): the
// real-broker benchmark of issue 18. On one real Kafka broker, the same
// JSON records as a backlog per partition count, then one after another:
// Floe end to end (`floe serve` as a subprocess), the honest baseline
// (bench/baseline, a subprocess), and once the raw decode+Parquet limit in
// this process. Each subprocess is measured from /proc and its table is
// checked afterwards: every (partition, offset) exactly once.

// kafkaBench holds the flags of a real-broker run.
type kafkaBench struct {
	brokers       string
	partitions    string
	interval      time.Duration
	steadyRate    int
	steadySeconds int
	baselineBin   string
	pycheck       string
	floeProfile   string
	dir           string
	keep          bool
	gomaxprocs1   bool
	oneFirst      bool
	formatList    string
	// brokerPID is the broker's process, whose CPU during each drain is
	// reported beside the consumer's: the two share this machine's cores.
	brokerPID int
	// cache is --broker-cache (bench_kafka_cache.go).
	cache string

	records  int
	out      io.Writer
	log      *slog.Logger
	topics   map[int]backlog
	formats  []string
	registry *embedded.Registry
	// formatBacklogs are the Avro and Protobuf backlogs (bench_kafka_formats.go).
	formatBacklogs map[string]backlog
}

func addKafkaBenchFlags(cmd *cobra.Command) *kafkaBench {
	kb := &kafkaBench{}
	f := cmd.Flags()
	f.StringVar(&kb.brokers, "brokers", "", "run the real-broker benchmark against these bootstrap servers (comma-separated) instead")
	f.StringVar(&kb.partitions, "kafka-partitions", "8,1000", "partition counts of the real-broker backlog topics (with --brokers)")
	f.DurationVar(&kb.interval, "commit-interval", 10*time.Second, "commit interval of Floe and the baseline (with --brokers)")
	f.IntVar(&kb.steadyRate, "steady-rate", 5000, "records/s produced in the steady phase after the backlog drains (with --brokers)")
	f.IntVar(&kb.steadySeconds, "steady-seconds", 60, "length of the steady phase; 0 skips it (with --brokers)")
	f.StringVar(&kb.baselineBin, "baseline-bin", "", "the bench/baseline binary (with --brokers; built into the run directory when empty)")
	f.StringVar(&kb.pycheck, "pycheck", "", "command running the interop suite's pyiceberg_check.py, run on Floe's tables (with --brokers)")
	f.StringVar(&kb.floeProfile, "floe-cpuprofile", "", "write a CPU profile of the first Floe run here, and of the Avro and Protobuf runs beside it with the format before the extension (with --brokers)")
	f.StringVar(&kb.dir, "dir", "", "run directory (with --brokers; a temporary one, removed afterwards, when empty)")
	f.BoolVar(&kb.keep, "keep", false, "keep the run directory (with --brokers)")
	f.BoolVar(&kb.oneFirst, "gomaxprocs1-first", false, "run the GOMAXPROCS=1 drain before the others (with --brokers)")
	f.BoolVar(&kb.gomaxprocs1, "gomaxprocs1", true, "drain the first backlog once more with Floe at GOMAXPROCS=1 (with --brokers)")
	f.StringVar(&kb.formatList, "kafka-formats", "json", "record formats (json, avro, protobuf; comma-separated): Floe also drains an Avro and a Protobuf backlog on the first partition count (with --brokers)")
	f.IntVar(&kb.brokerPID, "broker-pid", 0, "the broker's process ID, to report its CPU during each drain (with --brokers; 0: not reported)")
	f.StringVar(&kb.cache, "broker-cache", cacheWarm, "the broker's page cache before each process: warm (read the topic first), cold (drop the page cache; root, local broker) or as-is (with --brokers)")
	return kb
}

// run runs the whole benchmark and prints its table.
func (kb *kafkaBench) run(ctx context.Context, out io.Writer, records int) error {
	kb.out, kb.records, kb.log = out, records, slog.New(slog.NewTextHandler(io.Discard, nil))
	counts, err := parseCounts(kb.partitions)
	if err != nil {
		return err
	}
	if kb.formats, err = parseFormats(kb.formatList); err != nil {
		return err
	}
	if err := validCache(kb.cache); err != nil {
		return err
	}
	if err := kb.prepareDir(ctx); err != nil {
		return err
	}
	if !kb.keep {
		defer os.RemoveAll(kb.dir)
	}
	defer func() {
		if kb.registry != nil {
			kb.registry.Close()
		}
	}()
	fmt.Fprintf(out, "floe bench --brokers %s: %d JSON records per topic, partitions %v, commit interval %s, GOMAXPROCS=%d, broker cache %s, load %s\n",
		kb.brokers, records, counts, kb.interval, runtime.GOMAXPROCS(0), kb.cache, loadAvg())
	fmt.Fprintf(out, "run directory %s\n\n", kb.dir)
	kb.topics, kb.formatBacklogs = map[int]backlog{}, map[string]backlog{}
	for _, p := range counts {
		topic := fmt.Sprintf("bench-p%d-%d", p, time.Now().Unix())
		start := time.Now()
		b, err := kb.produceBacklog(ctx, topic, p, "json")
		if err != nil {
			return fmt.Errorf("producing the backlog of %s: %w", topic, err)
		}
		kb.topics[p] = b
		fmt.Fprintf(out, "backlog: %d records in %d partitions of %s in %.0f s\n", records, p, topic, time.Since(start).Seconds())
	}
	if err := kb.produceFormats(ctx, counts[0]); err != nil {
		return err
	}
	raw, err := kb.measureRaw(ctx)
	if err != nil {
		return fmt.Errorf("raw limit: %w", err)
	}
	results := []runResult{raw}
	var specs []runSpec
	for i, p := range counts {
		specs = append(specs, runSpec{who: "floe", partitions: p, profile: i == 0, steady: true}, runSpec{who: "baseline", partitions: p, steady: true})
	}
	if kb.gomaxprocs1 {
		// Whether Floe uses both cores: the first count's drain again on one
		// (first, with --gomaxprocs1-first, to see what the order does).
		one := runSpec{who: "floe", partitions: counts[0], gomaxprocs: 1}
		if kb.oneFirst {
			specs = append([]runSpec{one}, specs...)
		} else {
			specs = append(specs, one)
		}
	}
	specs = append(specs, kb.formatSpecs(counts[0])...)
	for _, s := range specs {
		r, err := kb.measure(ctx, s)
		if err != nil {
			return fmt.Errorf("%s over %d partitions: %w", s.who, s.partitions, err)
		}
		fmt.Fprintf(out, "%s\n", r.line())
		results = append(results, r)
	}
	fmt.Fprintf(out, "\nload after the run: %s\n\n", loadAvg())
	printKafkaTable(out, results)
	printFormatTable(out, results)
	return nil
}

// prepareDir makes the run directory and builds the baseline when no
// binary was given.
func (kb *kafkaBench) prepareDir(ctx context.Context) error {
	if kb.dir == "" {
		d, err := os.MkdirTemp("", "floe-kbench")
		if err != nil {
			return err
		}
		kb.dir = d
	}
	if err := os.MkdirAll(kb.dir, 0o755); err != nil {
		return err
	}
	if kb.baselineBin != "" {
		return nil
	}
	kb.baselineBin = filepath.Join(kb.dir, "baseline")
	build := exec.CommandContext(ctx, "go", "build", "-o", kb.baselineBin, "./bench/baseline")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building bench/baseline (run from the repository root, or pass --baseline-bin): %w", err)
	}
	return nil
}

// measureRaw times the raw limit in this process: the same records decoded
// by Floe's decoder and encoded by its sink, no Kafka. CPU from getrusage.
func (kb *kafkaBench) measureRaw(ctx context.Context) (runResult, error) {
	values := make([][]byte, kb.records)
	for i := range values {
		values[i] = []byte(benchRecord(i))
	}
	dir := filepath.Join(kb.dir, "raw")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return runResult{}, err
	}
	cpu0, load0 := selfCPU(), strings.Fields(loadAvg())[0]
	dur, err := benchRaw(ctx, dir, kb.log, values)
	if err != nil {
		return runResult{}, err
	}
	r := runResult{name: "raw limit (decode + Parquet, 1 loop, in process)", who: "raw", backlog: int64(len(values)),
		drain: dur, cpuSec: selfCPU() - cpu0, check: "not checked (no Kafka offsets)", load: load0 + "→" + strings.Fields(loadAvg())[0]}
	r.innerRate = float64(r.backlog) / dur.Seconds()
	fmt.Fprintf(kb.out, "%s\n", r.line())
	return r, nil
}

func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
