//go:build long

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// soakSample is one node's resources at one moment, read from outside:
// its /metrics (the process and Go collectors) and its Raft directory.
type soakSample struct {
	at         time.Time
	node       string
	inc        int
	rss        float64 // process_resident_memory_bytes
	goroutines float64 // go_goroutines
	openFiles  float64 // process_open_fds
	raftBytes  float64 // bytes under data_dir/raft (log store and snapshots)
	leader     float64 // floe_raft_is_leader: a leader holds more (replication, health checks)
	partitions int     // partitions it fetches: the floe_consumer_lag_records series it exposes
}

type sampler struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	out    []soakSample
}

// sample polls every running node every interval until stopped. A node
// that does not answer (paused, restarting) gives no sample that tick.
func (f *fleet) sample(interval time.Duration) *sampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sampler{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			for _, n := range f.running() {
				if x, ok := f.sampleNode(ctx, n); ok {
					s.mu.Lock()
					s.out = append(s.out, x)
					s.mu.Unlock()
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	f.t.Cleanup(func() { s.stop() })
	return s
}

func (s *sampler) stop() []soakSample {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.out)
}

func (f *fleet) sampleNode(ctx context.Context, n *fleetNode) (soakSample, bool) {
	inc, ok := f.incarnation(n)
	if !ok {
		return soakSample{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.adminAddr+"/metrics", nil)
	if err != nil {
		return soakSample{}, false
	}
	if f.adminToken != "" {
		req.Header.Set("Authorization", "Bearer "+f.adminToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return soakSample{}, false
	}
	defer resp.Body.Close()
	want := map[string]float64{"process_resident_memory_bytes": math.NaN(), "go_goroutines": math.NaN(), "process_open_fds": math.NaN(), "floe_raft_is_leader": math.NaN()}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	partitions := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "floe_consumer_lag_records{") {
			partitions++
		}
		name, val, found := strings.Cut(sc.Text(), " ")
		if _, ok := want[name]; found && ok {
			if v, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
				want[name] = v
			}
		}
	}
	if inc2, ok := f.incarnation(n); sc.Err() != nil || resp.StatusCode != http.StatusOK || !ok || inc2 != inc {
		return soakSample{}, false
	}
	for name, v := range want {
		if math.IsNaN(v) && name != "floe_raft_is_leader" { // the role is for reading, not judging
			return soakSample{}, false
		}
	}
	var raft int64
	_ = filepath.WalkDir(filepath.Join(n.dataDir, "raft"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				raft += fi.Size()
			}
		}
		return nil
	})
	return soakSample{at: time.Now(), node: n.id, inc: inc, rss: want["process_resident_memory_bytes"],
		goroutines: want["go_goroutines"], openFiles: want["process_open_fds"], raftBytes: float64(raft), leader: want["floe_raft_is_leader"], partitions: partitions}, true
}

// soakCSV is every sample, one line each, for reading a run's figures
// against what the node did (its leadership) beside the judged medians.
func soakCSV(samples []soakSample) string {
	var b strings.Builder
	b.WriteString("at,node,incarnation,rss_mib,goroutines,open_files,raft_mib,leader,partitions\n")
	for _, x := range samples {
		fmt.Fprintf(&b, "%s,%s,%d,%.1f,%.0f,%.0f,%.1f,%.0f,%d\n", x.at.UTC().Format(time.RFC3339), x.node, x.inc,
			x.rss/(1<<20), x.goroutines, x.openFiles, x.raftBytes/(1<<20), x.leader, x.partitions)
	}
	return b.String()
}

// soakFigures is one process's (node and incarnation) figures over the
// judged window: the median of its first and last stretch, the growth
// between them and the peak.
type soakFigures struct {
	proc                string
	samples             int
	spans               bool // the process lived through the whole window
	first, last, growth [4]float64
	peak                [4]float64
}

var soakMetrics = [4]string{"RSS MiB", "goroutines", "open files", "Raft dir MiB"}

func (x soakSample) values() [4]float64 {
	return [4]float64{x.rss / (1 << 20), x.goroutines, x.openFiles, x.raftBytes / (1 << 20)}
}

type soakResult struct {
	procs    []soakFigures
	failures []string
	from, to time.Time
	stretch  time.Duration
}

// soakReport judges the samples of [from, to]: every process is
// reported; the observed node's figures must grow less than 5%.
func soakReport(samples []soakSample, observed string, from, to time.Time, stretch time.Duration) soakResult {
	res := soakResult{from: from, to: to, stretch: stretch}
	byProc := map[string][]soakSample{}
	for _, x := range samples {
		k := fmt.Sprintf("%s#%d", x.node, x.inc)
		byProc[k] = append(byProc[k], x)
	}
	seenObserved := false
	for _, k := range slices.Sorted(maps.Keys(byProc)) {
		xs := byProc[k]
		fig := soakFigures{proc: k, samples: len(xs), spans: !xs[0].at.After(from) && !xs[len(xs)-1].at.Before(to.Add(-stretch))}
		var head, tail [4][]float64
		for _, x := range xs {
			v := x.values()
			for i := range v {
				fig.peak[i] = max(fig.peak[i], v[i])
				if !x.at.Before(from) && x.at.Before(from.Add(stretch)) {
					head[i] = append(head[i], v[i])
				}
				if !x.at.Before(to.Add(-stretch)) {
					tail[i] = append(tail[i], v[i])
				}
			}
		}
		for i := range fig.first {
			fig.first[i], fig.last[i] = median(head[i]), median(tail[i])
			if fig.first[i] > 0 {
				fig.growth[i] = fig.last[i]/fig.first[i] - 1
			}
		}
		res.procs = append(res.procs, fig)
		if xs[0].node != observed || !fig.spans {
			continue
		}
		seenObserved = true
		for i, g := range fig.growth {
			if len(head[i]) == 0 || len(tail[i]) == 0 {
				res.failures = append(res.failures, fmt.Sprintf("%s: no %s samples at the window's edges", k, soakMetrics[i]))
			} else if g >= 0.05 {
				res.failures = append(res.failures, fmt.Sprintf("%s: %s grew %.1f%% over the window (%.1f -> %.1f), want < 5%%",
					k, soakMetrics[i], 100*g, fig.first[i], fig.last[i]))
			}
		}
	}
	if !seenObserved {
		res.failures = append(res.failures, fmt.Sprintf("no samples of the observed node %s spanning the window", observed))
	}
	return res
}

func (r soakResult) markdown(seed uint64, dur, every time.Duration, counts map[string]int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "soak %s, a fault every %s (seed %d): %v\n", dur, every, seed, counts)
	fmt.Fprintf(&b, "window %s .. %s; first and last %s medians; growth = last/first - 1\n\n",
		r.from.Format(time.TimeOnly), r.to.Format(time.TimeOnly), r.stretch)
	b.WriteString("| process | samples | whole window |")
	for _, m := range soakMetrics {
		fmt.Fprintf(&b, " %s first / last (growth) / peak |", m)
	}
	b.WriteString("\n|---|---:|---|" + strings.Repeat("---:|", len(soakMetrics)) + "\n")
	// The processes a fault restarted inside the window have no growth to
	// judge: one line gives how many and their peaks.
	var others soakFigures
	n := 0
	for _, p := range r.procs {
		if !p.spans {
			n, others.samples = n+1, others.samples+p.samples
			for i := range others.peak {
				others.peak[i] = max(others.peak[i], p.peak[i])
			}
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %v |", p.proc, p.samples, p.spans)
		for i := range soakMetrics {
			fmt.Fprintf(&b, " %.1f / %.1f (%+.1f%%) / %.1f |", p.first[i], p.last[i], 100*p.growth[i], p.peak[i])
		}
		b.WriteString("\n")
	}
	if n > 0 {
		fmt.Fprintf(&b, "| %d restarted processes | %d | false |", n, others.samples)
		for i := range soakMetrics {
			fmt.Fprintf(&b, " peak %.1f |", others.peak[i])
		}
		b.WriteString("\n")
	}
	return b.String()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// TestSoakJudge: the soak's verdict fails a node whose figures grew 5% or
// more over the window, passes one that stayed flat, and reports the
// restarted processes without judging them.
func TestSoakJudge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	from, to := t0.Add(20*time.Minute), t0.Add(60*time.Minute)
	series := func(node string, inc int, start, end time.Duration, rss func(time.Duration) float64) []soakSample {
		var out []soakSample
		for at := start; at <= end; at += 30 * time.Second {
			out = append(out, soakSample{at: t0.Add(at), node: node, inc: inc, rss: rss(at) * (1 << 20), goroutines: 80, openFiles: 30, raftBytes: 33 << 20})
		}
		return out
	}
	flat := func(time.Duration) float64 { return 180 }
	leak := func(at time.Duration) float64 { return 180 + at.Minutes() } // +1 MiB a minute
	for _, c := range []struct {
		name     string
		samples  []soakSample
		failures int
	}{
		{"flat", append(series("n1", 1, 0, time.Hour, flat), series("n2", 3, 30*time.Minute, 35*time.Minute, leak)...), 0},
		{"leaking", series("n1", 1, 0, time.Hour, leak), 1},
		{"observed restarted", series("n1", 2, 30*time.Minute, time.Hour, flat), 1},
	} {
		res := soakReport(c.samples, "n1", from, to, 5*time.Minute)
		if len(res.failures) != c.failures {
			t.Errorf("%s: failures %q, want %d", c.name, res.failures, c.failures)
		}
		if md := res.markdown(1, time.Hour, time.Minute, nil); !strings.Contains(md, "| n1#") && c.name != "observed restarted" {
			t.Errorf("%s: report lacks the observed node:\n%s", c.name, md)
		}
	}
}
