package floebench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/floe-io/floe/cluster/catalog"
)

// runResult is one row of the real-broker table.
type runResult struct {
	name, who  string
	partitions int
	backlog    int64
	// drain is from the process's start to the first snapshot holding the
	// whole backlog; innerRate is records/s between the first commit and
	// that snapshot (without start-up and the last interval's tail).
	drain     time.Duration
	innerRate float64
	// estDrain is the drain without the wait for the commit grid: the
	// process commits every interval, so the snapshot that completes the
	// backlog lands up to an interval after its last records were taken,
	// and a drain of a few intervals moves by a whole interval between
	// runs of the same build (62,000 or 90,000 records/s for Floe's 2M,
	// 22 or 32 s). estDrain is the last commit before the completing one
	// plus the records left at the rate of the interval before it; it is
	// drain when there are too few commits to say (drainFigures). The
	// baseline still commits on this grid; Floe flushes a backlog's tail as
	// soon as it reaches the partitions' ends (worker/ingest/catchup.go), so
	// its two figures agree unless a tick comes first.
	estDrain time.Duration
	cpuSec   float64
	// brokerCPU is the broker's CPU seconds over the same drain (0: not
	// measured): on two shared cores, what the broker takes bounds what
	// any consumer can reach.
	brokerCPU   float64
	peakRSS     int64
	firstCommit time.Duration
	p50, p99    time.Duration
	steady      int
	check       string
	// load is the machine's 1-minute load average when the run started
	// and when its drain was committed: the runs share two cores.
	load string
	// format is the backlog's record format and bytesPerRecord the mean
	// size of its Kafka values (bench_kafka_formats.go).
	format         string
	bytesPerRecord float64
}

func (r runResult) rate() float64 { return float64(r.backlog) / r.drain.Seconds() }

// estRate is records/s over estDrain (over drain where it is not set).
func (r runResult) estRate() float64 {
	if r.estDrain <= 0 {
		return r.rate()
	}
	return float64(r.backlog) / r.estDrain.Seconds()
}

// cpuPerM is CPU seconds per million records of the backlog.
func (r runResult) cpuPerM() float64 { return r.cpuSec / (float64(r.backlog) / 1e6) }

func (r runResult) line() string {
	return fmt.Sprintf("%-48s %8.0f rec/s (%8.0f without the commit grid's wait, %8.0f between commits)  %6.1f CPU s/M  broker %s CPU s/M  RSS %5.0f MiB  first commit %5.1f s  freshness p50 %5.1f s p99 %5.1f s (%d)  load %s  %s",
		r.name, r.rate(), r.estRate(), r.innerRate, r.cpuPerM(), r.brokerPerM(), mib(r.peakRSS), r.firstCommit.Seconds(), r.p50.Seconds(), r.p99.Seconds(), r.steady, r.load, r.check)
}

// runSpec is one measured run.
type runSpec struct {
	who        string // floe or baseline
	partitions int
	profile    bool   // write Floe's CPU profile (--floe-cpuprofile)
	gomaxprocs int    // GOMAXPROCS of the process; 0: inherited
	steady     bool   // run the steady phase after the drain
	format     string // the backlog's format; "" is JSON, the topics of the partition counts
}

// measure runs one process over the topic with s.partitions partitions:
// the backlog's drain, then the steady phase, then the checks.
func (kb *kafkaBench) measure(ctx context.Context, s runSpec) (runResult, error) {
	who, partitions := s.who, s.partitions
	b, format := kb.topics[partitions], "json"
	if s.format != "" && s.format != "json" {
		b, format = kb.formatBacklogs[s.format], s.format
	}
	topic := b.topic
	r := runResult{name: fmt.Sprintf("%s, %d partitions", who, partitions), who: who, partitions: partitions,
		format: format, bytesPerRecord: b.bytesPerRecord()}
	if s.gomaxprocs > 0 {
		r.name += fmt.Sprintf(", GOMAXPROCS=%d", s.gomaxprocs)
		r.who = fmt.Sprintf("%s-gomaxprocs%d", who, s.gomaxprocs)
	}
	if format != "json" {
		r.name += ", " + format
		r.who += "-" + format
	}
	ends, err := kb.highWatermarks(ctx, topic)
	if err != nil {
		return r, err
	}
	for _, e := range ends {
		r.backlog += e
	}
	dir := filepath.Join(kb.dir, fmt.Sprintf("%s-p%d", r.who, partitions))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return r, err
	}
	cmd, tableDir, err := kb.command(who, topic, format, dir, s.profile)
	if err != nil {
		return r, err
	}
	if s.gomaxprocs > 0 {
		cmd.Env = append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", s.gomaxprocs))
	}
	prep, err := kb.prepareCache(ctx, topic, ends)
	if err != nil {
		return r, err
	}
	fmt.Fprintf(kb.out, "  %s: %s\n", r.name, prep)
	load0 := strings.Fields(loadAvg())[0]
	broker0 := kb.brokerCPU()
	p, err := startKafkaProc(cmd, filepath.Join(dir, who+".log"))
	if err != nil {
		return r, err
	}
	defer p.stop()
	snaps, err := waitTotal(ctx, p, tableDir, r.backlog, 30*time.Minute)
	if err != nil {
		return r, fmt.Errorf("draining the backlog: %w", err)
	}
	r.cpuSec, r.peakRSS = p.cpu(), p.peakRSS()
	if broker0 > 0 {
		r.brokerCPU = kb.brokerCPU() - broker0
	}
	r.load = load0 + "→" + strings.Fields(loadAvg())[0]
	r.drainFigures(snaps, p.start)
	var acks []steadyAck
	if s.steady && kb.steadySeconds > 0 {
		if acks, err = kb.produceSteady(ctx, topic, partitions); err != nil {
			return r, fmt.Errorf("steady phase: %w", err)
		}
		if _, err := waitTotal(ctx, p, tableDir, r.backlog+int64(len(acks)), 5*time.Minute); err != nil {
			return r, fmt.Errorf("after the steady phase: %w", err)
		}
	}
	p.stop()
	return r, kb.checkRun(ctx, &r, tableDir, topic, acks)
}

// brokerCPU is the broker process's CPU seconds so far (0 without
// --broker-pid).
func (kb *kafkaBench) brokerCPU() float64 {
	if kb.brokerPID <= 0 {
		return 0
	}
	return procCPU(kb.brokerPID)
}

// brokerPerM is the broker's CPU seconds per million records drained, and
// the cores the consumer and the broker kept busy together over the drain
// ("—" when not measured).
func (r runResult) brokerPerM() string {
	if r.brokerCPU <= 0 || r.drain <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f (%.2f cores with it)", r.brokerCPU/(float64(r.backlog)/1e6), (r.cpuSec+r.brokerCPU)/r.drain.Seconds())
}

// drainFigures fills the drain time, the rate between commits and the time
// to the first commit from the table's snapshots.
func (r *runResult) drainFigures(snaps []snapInfo, start time.Time) {
	var appends []*snapInfo // up to the one completing the backlog
	for i := range snaps {
		s := &snaps[i]
		if s.added == 0 {
			continue
		}
		appends = append(appends, s)
		if s.total >= r.backlog {
			break
		}
	}
	if len(appends) == 0 || appends[len(appends)-1].total < r.backlog {
		return
	}
	first, last := appends[0], appends[len(appends)-1]
	r.firstCommit = first.at.Sub(start)
	r.drain = last.at.Sub(start)
	r.estDrain = r.drain
	if span := last.at.Sub(first.at).Seconds(); span > 0 {
		r.innerRate = float64(last.total-first.total) / span
	}
	if n := len(appends); n >= 3 {
		// The interval before the last one was busy from end to end (the
		// backlog was not done), so its rate is the process's; the last
		// one's records took their share of it.
		prev, prev2 := appends[n-2], appends[n-3]
		if span := prev.at.Sub(prev2.at).Seconds(); span > 0 && prev.total > prev2.total {
			rate := float64(prev.total-prev2.total) / span
			left := time.Duration(float64(r.backlog-prev.total) / rate * float64(time.Second))
			r.estDrain = min(prev.at.Add(left).Sub(start), r.drain)
		}
	}
}

// checkRun checks the table (and, for Floe, runs the interop checker)
// and fills the freshness figures.
func (kb *kafkaBench) checkRun(ctx context.Context, r *runResult, tableDir, topic string, acks []steadyAck) error {
	ends, err := kb.highWatermarks(ctx, topic)
	if err != nil {
		return err
	}
	c, err := checkTable(ctx, tableDir, ends, acks)
	if err != nil {
		return fmt.Errorf("checking the table: %w", err)
	}
	r.check = c.verdict()
	r.steady = len(acks)
	r.p50, r.p99 = percentile(c.freshness, 0.50), percentile(c.freshness, 0.99)
	if strings.HasPrefix(r.who, "floe") && kb.pycheck != "" {
		r.check += ", " + kb.runPycheck(ctx, c.metadata, topic, ends)
	}
	return nil
}

// runPycheck runs the interop suite's PyIceberg reader on the table: every
// offset once, floe.offsets of the current snapshot equal to the ends.
func (kb *kafkaBench) runPycheck(ctx context.Context, metadata, topic string, ends map[int32]int64) string {
	ranges := map[string][2]int64{}
	for p, e := range ends {
		ranges[fmt.Sprintf("%s/%d", topic, p)] = [2]int64{0, e}
	}
	exp, _ := json.Marshal(map[string]any{"table": "bench.floe", "columns": []string{}, "ranges": ranges})
	path := filepath.Join(kb.dir, "expect-"+topic+".json")
	if err := os.WriteFile(path, exp, 0o644); err != nil {
		return "pyiceberg: " + err.Error()
	}
	args := append(strings.Fields(kb.pycheck), "--metadata-location", metadata, "--expect", path, "--mode", "table")
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil {
		return fmt.Sprintf("pyiceberg FAILED: %v: %s", err, strings.Join(lines, " | "))
	}
	return "pyiceberg: " + lines[len(lines)-1]
}

func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	// Nearest rank: the smallest value with at least q of them at or below it.
	return s[max(0, int(math.Ceil(q*float64(len(s))))-1)]
}

// snapInfo is what the poll reads of a snapshot from the newest metadata
// file: when it was committed and how many records it adds and holds.
type snapInfo struct {
	at           time.Time
	added, total int64
}

// readSnapshots reads the snapshots of the newest metadata file in
// tableDir/metadata, in commit order.
func readSnapshots(tableDir string) ([]snapInfo, error) {
	path, err := newestMetadata(tableDir)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if b, err = catalog.PlainMetadata(b); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var meta struct {
		Snapshots []struct {
			At      int64             `json:"timestamp-ms"`
			Summary map[string]string `json:"summary"`
		} `json:"snapshots"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	out := make([]snapInfo, 0, len(meta.Snapshots))
	for _, s := range meta.Snapshots {
		added, _ := strconv.ParseInt(s.Summary["added-records"], 10, 64)
		total, _ := strconv.ParseInt(s.Summary["total-records"], 10, 64)
		out = append(out, snapInfo{at: time.UnixMilli(s.At), added: added, total: total})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out, nil
}

// newestMetadata is the most recently written *.metadata.json of a table
// (gzip-compressed or not).
func newestMetadata(tableDir string) (string, error) {
	ents, err := os.ReadDir(filepath.Join(tableDir, "metadata"))
	if err != nil {
		return "", err
	}
	var best string
	var bestAt time.Time
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".metadata.json") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if best == "" || info.ModTime().After(bestAt) || (info.ModTime().Equal(bestAt) && e.Name() > filepath.Base(best)) {
			best, bestAt = filepath.Join(tableDir, "metadata", e.Name()), info.ModTime()
		}
	}
	if best == "" {
		return "", fmt.Errorf("no metadata file in %s yet", tableDir)
	}
	return best, nil
}

// printKafkaTable prints the results as a Markdown table, each figure with
// its ratio to the baseline over the same partitions.
func printKafkaTable(out io.Writer, rs []runResult) {
	base := map[int]runResult{}
	for _, r := range rs {
		if r.who == "baseline" {
			base[r.partitions] = r
		}
	}
	ratio := func(a, b float64) string {
		if b == 0 || a == 0 || math.IsNaN(b) || math.IsInf(b, 0) {
			return "—"
		}
		return fmt.Sprintf("%.2f×", a/b)
	}
	fmt.Fprintln(out, "| run | records | records/s draining (× baseline) | without the commit grid's wait (×) | between commits | CPU s per M records (×) | broker CPU s per M records | peak RSS (×) | first commit (×) | freshness p50 / p99 (×), steady records | load | check |")
	fmt.Fprintln(out, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
	for _, r := range rs {
		b, ok := base[r.partitions]
		if r.who == "raw" {
			b, ok = base[8]
		}
		if !ok {
			b = runResult{}
		}
		fmt.Fprintf(out, "| %s | %d | %.0f (%s) | %.0f (%s) | %.0f | %.1f (%s) | %s | %s (%s) | %.1f s (%s) | %.1f / %.1f s (%s / %s), %d | %s | %s |\n",
			r.name, r.backlog, r.rate(), ratio(r.rate(), b.rate()), r.estRate(), ratio(r.estRate(), b.estRate()), r.innerRate, r.cpuPerM(), ratio(r.cpuPerM(), b.cpuPerM()), r.brokerPerM(),
			mibOrDash(r.peakRSS), ratio(float64(r.peakRSS), float64(b.peakRSS)), r.firstCommit.Seconds(), ratio(r.firstCommit.Seconds(), b.firstCommit.Seconds()),
			r.p50.Seconds(), r.p99.Seconds(), ratio(r.p50.Seconds(), b.p50.Seconds()), ratio(r.p99.Seconds(), b.p99.Seconds()), r.steady, r.load, r.check)
	}
}

func mibOrDash(b int64) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f MiB", mib(b))
}
