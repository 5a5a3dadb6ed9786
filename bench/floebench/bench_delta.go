package floebench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/floe-io/floe/internal/config"
)

// formatRuns are the end-to-end passes of one bench over the same records
// with formats [iceberg] and [iceberg, delta], alternating so that a
// change of the machine's load falls on both; the fastest pass of each is
// the figure (the least disturbed by other work on a shared machine).
type formatRuns struct {
	icebergAll, deltaAll []time.Duration
	iceberg, delta       time.Duration // fastest of each; delta 0 without delta passes
	versions             int           // Delta log versions of the last delta pass
	// CPU seconds of this process per pass (node, kfake, start and stop):
	// less moved than wall time by other work on a shared machine.
	icebergCPU, deltaCPU []float64
	load                 string // load average before → after
}

// benchFormatPasses runs passes of [iceberg] then [iceberg, delta] (just
// one [iceberg] pass when passes is 0), each a fresh node and warehouse
// reading the whole topic from the start; it returns the data files of
// the last [iceberg] pass.
func benchFormatPasses(ctx context.Context, dir string, log *slog.Logger, brokers []string, want, passes int) (formatRuns, int64, error) {
	var (
		r     formatRuns
		files int64
	)
	load0 := loadAvg()
	for i := range max(passes, 1) {
		cpu0 := selfCPU()
		d, f, err := consumeBenchAs(ctx, dir, fmt.Sprintf("e2e-iceberg-%d", i), log, brokers, config.Table{Format: "json", ErrorMode: "dlq"}, "", want)
		if err != nil {
			return r, 0, fmt.Errorf("[iceberg] pass %d: %w", i+1, err)
		}
		r.icebergAll, files = append(r.icebergAll, d), f
		r.icebergCPU = append(r.icebergCPU, selfCPU()-cpu0)
		if passes == 0 {
			break
		}
		both := config.Table{Format: "json", ErrorMode: "dlq", Formats: []string{config.FormatIceberg, config.FormatDelta}}
		cpu0 = selfCPU()
		if d, _, err = consumeBenchAs(ctx, dir, fmt.Sprintf("e2e-delta-%d", i), log, brokers, both, "", want); err != nil {
			return r, 0, fmt.Errorf("[iceberg, delta] pass %d: %w", i+1, err)
		}
		// The pass counts only if it wrote the Delta log: one version per
		// commit at least.
		logs, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("e2e-delta-%d-wh", i), "bench", "e2e", "_delta_log", "*.json"))
		if len(logs) == 0 {
			return r, 0, fmt.Errorf("[iceberg, delta] pass %d wrote no delta log", i+1)
		}
		r.deltaAll, r.versions = append(r.deltaAll, d), len(logs)
		r.deltaCPU = append(r.deltaCPU, selfCPU()-cpu0)
	}
	r.iceberg, r.delta = fastest(r.icebergAll), fastest(r.deltaAll)
	r.load = load0 + " → " + loadAvg()
	return r, files, nil
}

func fastest(ds []time.Duration) time.Duration {
	var best time.Duration
	for _, d := range ds {
		if best == 0 || d < best {
			best = d
		}
	}
	return best
}

// print writes the passes and the cost of the Delta log: the throughput
// with [iceberg, delta] over that with [iceberg] (the goal: at
// least 0.95).
func (r formatRuns) print(out io.Writer) {
	if r.delta == 0 {
		return
	}
	fmt.Fprintf(out, "passes (seconds, alternating): [iceberg] %s   [iceberg, delta] %s (%d delta versions)\n", secs(r.icebergAll), secs(r.deltaAll), r.versions)
	fmt.Fprintf(out, "ratio [iceberg, delta] / [iceberg] throughput: %.3f   (goal >= 0.95)\n", r.iceberg.Seconds()/r.delta.Seconds())
	if len(r.icebergCPU) > 0 && len(r.deltaCPU) > 0 {
		ic, dc := slices.Min(r.icebergCPU), slices.Min(r.deltaCPU)
		fmt.Fprintf(out, "CPU seconds per pass: [iceberg] %s   [iceberg, delta] %s\n", cpus(r.icebergCPU), cpus(r.deltaCPU))
		fmt.Fprintf(out, "ratio by CPU (least per format) [iceberg] / [iceberg, delta]: %.3f   load average %s\n", ic/dc, r.load)
	}
}

func cpus(v []float64) string {
	s := ""
	for i, c := range v {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.2f", c)
	}
	return s
}

func secs(ds []time.Duration) string {
	s := ""
	for i, d := range ds {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.2f", d.Seconds())
	}
	return s
}
