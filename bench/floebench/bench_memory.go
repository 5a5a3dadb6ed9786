package floebench

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/embedded"
)

// `floe bench --memory`: one real `floe serve` process on an in-process
// kfake broker, for each partition count: its resident memory once every
// partition is fetched and nothing arrives (idle), then its peak while a
// backlog is materialized under a small memory_budget (load), with the
// budget's held bytes as the node's status reports them.

// memoryRow is one partition count's measurement.
type memoryRow struct {
	partitions          int
	idleRSS, loadRSS    int64
	peakHeld, limit     int64
	records             int64
	settle, materialize time.Duration
}

func runMemoryBench(ctx context.Context, out io.Writer, counts []int, perPart int, budget config.ByteSize) error {
	fmt.Fprintf(out, "floe bench --memory: 1 node, memory_budget %d MiB, %d records of ~450 B per partition under load\n\n", budget>>20, perPart)
	var rows []memoryRow
	for _, n := range counts {
		r, err := measureMemory(ctx, out, n, perPart, budget)
		if err != nil {
			return fmt.Errorf("%d partitions: %w", n, err)
		}
		rows = append(rows, r)
	}
	fmt.Fprintln(out, "\n| partitions | idle RSS | idle RSS per partition | load: peak RSS | load: peak budget held / limit | records materialized |")
	fmt.Fprintln(out, "| ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range rows {
		fmt.Fprintf(out, "| %d | %.0f MiB | %.2f MiB | %.0f MiB | %.0f / %.0f MiB | %d in %.0f s |\n", r.partitions,
			mib(r.idleRSS), mib(r.idleRSS)/float64(r.partitions), mib(r.loadRSS), mib(r.peakHeld), mib(r.limit), r.records, r.materialize.Seconds())
	}
	if len(rows) > 1 {
		a, b := rows[0], rows[len(rows)-1]
		fmt.Fprintf(out, "\nidle RSS per added partition (%d to %d): %.3f MiB\n", a.partitions, b.partitions,
			mib(b.idleRSS-a.idleRSS)/float64(b.partitions-a.partitions))
	}
	return nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// measureMemory runs one node over partitions partitions: idle, then load.
func measureMemory(ctx context.Context, out io.Writer, partitions, perPart int, budget config.ByteSize) (memoryRow, error) {
	row := memoryRow{partitions: partitions}
	bin, err := os.Executable()
	if err != nil {
		return row, err
	}
	dir, err := os.MkdirTemp("", "floe-mbench")
	if err != nil {
		return row, err
	}
	defer os.RemoveAll(dir)
	topics := min(10, partitions)
	names := make([]string, topics)
	for i := range names {
		names[i] = fmt.Sprintf("mb%02d", i)
	}
	kafka, err := embedded.StartKafka(partitions/topics, names...)
	if err != nil {
		return row, err
	}
	defer kafka.Close()
	b := &clusterBench{out: out, nodes: 1, partitions: partitions / topics * topics, topics: topics, perPart: perPart, dir: dir, bin: bin,
		brokers: kafka.Addrs(), memoryBudget: budget}
	start := time.Now()
	if err := b.startNodes(names); err != nil {
		return row, err
	}
	defer b.stopAll()
	if err := b.waitFetching(ctx); err != nil {
		return row, err
	}
	row.settle = time.Since(start)
	row.idleRSS = b.idleRSS(ctx)
	fmt.Fprintf(out, "%d partitions: all fetched after %.0f s, idle RSS %.0f MiB\n", b.partitions, row.settle.Seconds(), mib(row.idleRSS))

	cl, err := kafka.Producer(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(8<<20))
	if err != nil {
		return row, err
	}
	defer cl.Close()
	row.records = int64(b.partitions) * int64(perPart)
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	p := b.procs[0]
	p.peakRSS.Store(0)
	go b.sampleMemory(lctx)
	held := make(chan [2]int64, 1)
	go func() { held <- b.peakHeld(lctx) }()
	start = time.Now()
	if err := b.produce(ctx, cl, names, perPart, 0); err != nil {
		return row, err
	}
	if err := b.waitRows(ctx, row.records); err != nil {
		return row, err
	}
	row.materialize = time.Since(start)
	stop()
	h := <-held
	row.peakHeld, row.limit, row.loadRSS = h[0], h[1], p.peakRSS.Load()
	fmt.Fprintf(out, "  load: %d records in %.0f s, peak RSS %.0f MiB, peak budget held %.0f of %.0f MiB\n",
		row.records, row.materialize.Seconds(), mib(row.loadRSS), mib(row.peakHeld), mib(row.limit))
	return row, nil
}

// waitFetching waits until the node holds every partition; its readers
// start right after, within the idle sampling's window.
func (b *clusterBench) waitFetching(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		if rep, err := b.status(ctx); err == nil && partitionsOf(rep, b.procs[0].id) >= b.partitions {
			return nil
		}
		if err := sleepCtx(ctx, time.Second); err != nil {
			return err
		}
	}
	return fmt.Errorf("not every partition fetched after 10 minutes")
}

// idleRSS samples the node for 10 s once it fetches everything and takes
// the largest sample: the idle clients' long polls, timers and buffers
// are all in it.
func (b *clusterBench) idleRSS(ctx context.Context) int64 {
	var peak int64
	for range 20 {
		peak = max(peak, readRSS(b.procs[0].cmd.Process.Pid))
		if sleepCtx(ctx, 500*time.Millisecond) != nil {
			break
		}
	}
	return peak
}

// peakHeld polls the node's status for the budget's held bytes until ctx
// ends and returns the largest seen and the limit.
func (b *clusterBench) peakHeld(ctx context.Context) [2]int64 {
	var out [2]int64
	for ctx.Err() == nil {
		if rep, err := b.status(ctx); err == nil && rep.Memory != nil {
			out[0], out[1] = max(out[0], rep.Memory.HeldBytes), rep.Memory.LimitBytes
		}
		_ = sleepCtx(ctx, 200*time.Millisecond)
	}
	return out
}

// waitRows waits until the tables hold total rows.
func (b *clusterBench) waitRows(ctx context.Context, total int64) error {
	deadline := time.Now().Add(15 * time.Minute)
	var rows int64
	for time.Now().Before(deadline) {
		if rep, err := b.status(ctx); err == nil {
			if rows = sumRows(rep); rows >= total {
				return nil
			}
		}
		if err := sleepCtx(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("%d of %d rows committed after 15 minutes", rows, total)
}

// runMemoryBenchFlags is runMemoryBench from `floe bench --memory`'s
// flags: the partition counts and the budget as written.
func runMemoryBenchFlags(ctx context.Context, out io.Writer, memCounts, memBudget string, perPart int) error {
	counts, err := parseCounts(memCounts)
	if err != nil {
		return err
	}
	budget, err := config.ParseByteSize(memBudget)
	if err != nil {
		return fmt.Errorf("--memory-budget: %w", err)
	}
	return runMemoryBench(ctx, out, counts, perPart, budget)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// parseCounts reads a comma-separated list of partition counts.
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--memory-partitions: %q is not a partition count", f)
		}
		out = append(out, n)
	}
	return out, nil
}
