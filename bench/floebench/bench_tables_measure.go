package floebench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/floe-io/floe/internal/status"
)

// endpointTiming is one GET of a status endpoint: how long it took and
// how large the answer was.
type endpointTiming struct {
	took  time.Duration
	bytes int
}

// tablesWindow gathers the steady window's readings.
type tablesWindow struct {
	first, last tablesSample
	rss         []int64 // every node's every reading
	freshness   []time.Duration
	statusGet   []endpointTiming
	metricsGet  []endpointTiming
	pageGet     []endpointTiming // GET /v1/status?limit=50: a summary and one page
	statusErrs  int
	atStart     []raftReading // when every table had committed
}

// measure waits out the warm-up, then reads the nodes every 5 s for the
// steady window and prints the figures.
func (tb *tablesBench) measure(ctx context.Context) error {
	atStart := tb.readRaft(ctx)
	if err := sleepCtx(ctx, tb.warmup); err != nil {
		return err
	}
	w := &tablesWindow{first: tb.sample(), atStart: atStart}
	end := w.first.at.Add(tb.steady)
	for time.Now().Before(end) {
		// 4-6 s apart, so that readings do not lock onto the flush slots.
		wait := 4*time.Second + time.Duration(rand.Int64N(int64(2*time.Second)))
		if err := sleepCtx(ctx, min(wait, time.Until(end))); err != nil {
			return err
		}
		tb.readEndpoints(ctx, w)
		s := tb.sample()
		w.rss = append(w.rss, s.rss...)
		w.last = s
	}
	tb.report(w)
	rep, _ := tb.cb.status(ctx)
	tb.reportRaft(tb.out, w, rep)
	return nil
}

// readEndpoints times GET /v1/status and GET /metrics on the first node
// and takes every table's freshness from the status.
func (tb *tablesBench) readEndpoints(ctx context.Context, w *tablesWindow) {
	addr := tb.cb.procs[0].admin
	body, t, err := timedGet(ctx, "http://"+addr+"/v1/status")
	if err != nil {
		w.statusErrs++
	} else {
		w.statusGet = append(w.statusGet, t)
		var rep status.Report
		if json.Unmarshal(body, &rep) == nil {
			for _, tr := range rep.Tables {
				if tr.Rows > 0 && !strings.HasSuffix(tr.Table, "_dlq") {
					w.freshness = append(w.freshness, time.Duration(tr.FreshnessSec*float64(time.Second)))
				}
			}
		}
	}
	if _, t, err := timedGet(ctx, "http://"+addr+"/metrics"); err == nil {
		w.metricsGet = append(w.metricsGet, t)
	}
	if _, t, err := timedGet(ctx, "http://"+addr+"/v1/status?limit=50"); err == nil {
		w.pageGet = append(w.pageGet, t)
	}
}

func timedGet(ctx context.Context, url string) ([]byte, endpointTiming, error) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, endpointTiming{}, err
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, endpointTiming{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, endpointTiming{}, fmt.Errorf("GET %s: %s %v", url, resp.Status, err)
	}
	return body, endpointTiming{took: time.Since(start), bytes: len(body)}, nil
}

// report prints the window's figures: the table row, then the
// per-table costs and the store's view by kind of object.
func (tb *tablesBench) report(w *tablesWindow) {
	secs := w.last.at.Sub(w.first.at).Seconds()
	tableHours := float64(tb.tables) * secs / 3600
	cpu := w.last.cpu - w.first.cpu
	commits := w.last.commits - w.first.commits
	slices.Sort(w.rss)
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	out := tb.out
	fmt.Fprintf(out, "\nsteady window %.0f s (after %s of warm-up), %d records produced in all, %d failed\n",
		secs, tb.warmup, tb.sent.Load(), tb.failed.Load())
	fmt.Fprintf(out, "| tables | nodes | RSS median / max per node | CPU s per min (all nodes) | commits/s | CPU ms per commit | freshness p50 / p99 / max | data dir growth | GET /v1/status p50 / max, size | GET /metrics p50 / max, size |\n")
	fmt.Fprintf(out, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(out, "| %d | %d | %.0f / %.0f MiB | %.1f | %.1f | %.1f | %.1f / %.1f / %.1f s | %.2f MB/min | %s | %s |\n",
		tb.tables, tb.nodes, mib(rankOf(w.rss, 0.5)), mib(rankOf(w.rss, 1)), cpu/secs*60, float64(commits)/secs,
		1000*cpu/max(1, float64(commits)),
		percentile(w.freshness, 0.5).Seconds(), percentile(w.freshness, 0.99).Seconds(), percentile(w.freshness, 1).Seconds(),
		float64(w.last.dataDir-w.first.dataDir)/1e6/secs*60, timingCell(w.statusGet), timingCell(w.metricsGet))
	fmt.Fprintf(out, "GET /v1/status?limit=50 (the table summary and one page): %s\n", timingCell(w.pageGet))
	if w.statusErrs > 0 {
		fmt.Fprintf(out, "(%d status reads failed)\n", w.statusErrs)
	}
	fmt.Fprintf(out, "\nper table-hour, as the object store counted (%.2f table-hours measured):\n", tableHours)
	fmt.Fprintf(out, "| object | PUT bytes | PUTs | GETs | LISTs | DELETEs |\n|---|---:|---:|---:|---:|---:|\n")
	var meta, data, puts, reqs float64
	for _, k := range objectKinds {
		a, b := w.first.s3[k], w.last.s3[k]
		pb, p := float64(b.PutBytes-a.PutBytes)/tableHours, float64(b.Put-a.Put)/tableHours
		g, l, d := float64(b.Get-a.Get)/tableHours, float64(b.List-a.List)/tableHours, float64(b.Delete-a.Delete)/tableHours
		fmt.Fprintf(out, "| %s | %.0f KB | %.0f | %.0f | %.0f | %.0f |\n", k, pb/1e3, p, g, l, d)
		switch k {
		case kindMetadataJSON, kindManifestList, kindManifest:
			meta += pb
		case kindData:
			data += pb
		}
		puts += p
		reqs += p + g + l + d
	}
	fmt.Fprintf(out, "metadata bytes / data bytes: %.2f (%.0f KB of metadata, %.0f KB of data per table-hour); %.0f PUTs and %.0f requests in all per table-hour\n",
		meta/max(1, data), meta/1e3, data/1e3, puts, reqs)
}

// rankOf is the value at quantile q of sorted vs (nearest rank).
func rankOf(vs []int64, q float64) int64 {
	if len(vs) == 0 {
		return 0
	}
	i := int(q*float64(len(vs)) + 0.5)
	return vs[min(max(i-1, 0), len(vs)-1)]
}

func timingCell(ts []endpointTiming) string {
	if len(ts) == 0 {
		return "—"
	}
	var d []time.Duration
	size := 0
	for _, t := range ts {
		d = append(d, t.took)
		size = max(size, t.bytes)
	}
	return fmt.Sprintf("%.0f / %.0f ms, %.0f KB", float64(percentile(d, 0.5).Microseconds())/1000,
		float64(percentile(d, 1).Microseconds())/1000, float64(size)/1e3)
}
