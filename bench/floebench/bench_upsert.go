package floebench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync/atomic"
	"time"

	"github.com/floe-io/floe/sinks/iceberg/upsert"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/embedded"
	"github.com/floe-io/floe/internal/status"
)

// `floe bench --upsert-passes N` (issue 20): the same keyed records (many
// updates of each of a set of Kafka keys) end to end into an append table
// and into an upsert table, N passes of each alternating, each a fresh
// node and warehouse reading the topic from the start, so that a change of
// the machine's load falls on both; then the upsert table's key index: its
// size on disk, the memory the upsert passes held beyond the append ones,
// and a rebuild of it from the table after its file was deleted.

// upsertPass is one end-to-end pass: from the node's start until every
// record is committed.
type upsertPass struct {
	dur      time.Duration
	cpu      float64 // CPU seconds of the whole process (node and kfake)
	peakHeap uint64  // the most heap in use sampled while it ran
	// After a GC at the end, the node still running: the heap still live
	// and the resident memory, anonymous and file-backed (bbolt maps its
	// file, so the index pages read count there, not in the heap).
	liveHeap         uint64
	rssAnon, rssFile int64
	// indexHeap is the part of liveHeap allocated under the key index's
	// code (bbolt, upsert.Index): heapOf.
	indexHeap uint64
}

// upsertRuns is the bench's result.
type upsertRuns struct {
	keys, updates, partitions int
	recordBytes               float64 // average value size
	appends, upserts          []upsertPass
	// The key index after the last upsert pass: its file's size, its keys
	// and the rebuilds the pass made (a compaction costs one).
	index                   upsert.IndexSize
	indexKeys, passRebuilds int64
	// The rebuild from the table of a node restarted without the index
	// file: its duration as the node reports it, the keys it found, and
	// the restart's pass (which also commits the few records that make
	// the commit that rebuilds).
	rebuild     time.Duration
	rebuilds    int64
	rebuildKeys int64
	rebuildPass upsertPass
	load        string
}

func runUpsertBench(ctx context.Context, out io.Writer, keys, updates, partitions, passes int) error {
	if keys < partitions || updates < keys {
		return fmt.Errorf("--upsert-keys %d must be at least --partitions %d and at most --upsert-updates %d", keys, partitions, updates)
	}
	dir, log, cleanup, err := benchScratch("floe-ubench")
	if err != nil {
		return err
	}
	defer cleanup()
	kafka, err := embedded.StartKafka(partitions, "bench")
	if err != nil {
		return err
	}
	defer kafka.Close()
	r := upsertRuns{keys: keys, updates: updates, partitions: partitions}
	bytes, err := produceUpserts(ctx, kafka, 0, updates, keys, partitions)
	if err != nil {
		return fmt.Errorf("producing: %w", err)
	}
	r.recordBytes = float64(bytes) / float64(updates)
	fmt.Fprintf(out, "floe bench --upsert-passes %d: %d JSON records (updates) of %d distinct Kafka keys, %.0f bytes each on average, %d partitions, GOMAXPROCS=%d\n\n",
		passes, updates, keys, r.recordBytes, partitions, runtime.GOMAXPROCS(0))
	load0 := loadAvg()
	var last config.Config
	for i := range passes {
		p, _, err := benchPass(ctx, dir, fmt.Sprintf("append-%d", i), log, kafka.Addrs(), config.ModeAppend, int64(updates), nil)
		if err != nil {
			return fmt.Errorf("append pass %d: %w", i+1, err)
		}
		r.appends = append(r.appends, p)
		if p, last, err = benchPass(ctx, dir, fmt.Sprintf("upsert-%d", i), log, kafka.Addrs(), config.ModeUpsert, int64(updates), r.readIndex); err != nil {
			return fmt.Errorf("upsert pass %d: %w", i+1, err)
		}
		r.upserts = append(r.upserts, p)
		if r.index, err = upsert.ReadIndexSize(filepath.Join(last.Node.DataDir, "upsert-keys.db")); err != nil {
			return err
		}
	}
	if err := r.benchRebuild(ctx, kafka, last, log); err != nil {
		return fmt.Errorf("rebuilding the key index: %w", err)
	}
	r.load = load0 + " → " + loadAvg()
	r.print(out)
	return nil
}

// produceUpserts writes records from to to-1 to the topic bench: record j
// is an update of key j mod keys, in the partition of that key (key mod
// partitions, as a key partitioner keeps a key in one partition), with
// the value benchRecord(j). The values are made as they are sent: the full
// size (10M records) would not fit in memory twice. It returns the bytes
// of the values.
func produceUpserts(ctx context.Context, kafka *embedded.Kafka, from, to, keys, partitions int) (int64, error) {
	cl, err := kafka.Producer(kgo.DefaultProduceTopic("bench"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(8<<20))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	const batch = 5000
	var bytes int64
	for i := from; i < to; i += batch {
		recs := make([]*kgo.Record, 0, batch)
		for j := i; j < min(i+batch, to); j++ {
			k := j % keys
			v := []byte(benchRecord(j))
			bytes += int64(len(v))
			recs = append(recs, &kgo.Record{Partition: int32(k % partitions), Key: fmt.Appendf(nil, "key-%09d", k), Value: v})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return 0, err
		}
	}
	return bytes, nil
}

// benchPass starts a node named id in dir mapping the topic bench to the
// table bench.e2e in mode, and waits until it has committed want records.
// atEnd, when not nil, reads what it needs of the node before it stops.
// It returns the pass and the node's configuration (to restart it).
func benchPass(ctx context.Context, dir, id string, log *slog.Logger, brokers []string, mode string, want int64, atEnd func(context.Context, *node.Node, config.Config) error) (upsertPass, config.Config, error) {
	raftAddr, err := embedded.FreeAddr()
	if err != nil {
		return upsertPass{}, config.Config{}, err
	}
	table := config.Table{Topic: "bench", Namespace: "bench", Name: "e2e", StartOffset: "earliest", Format: "json", ErrorMode: "dlq", Mode: mode}
	cfg := benchConfig(dir, id, raftAddr, brokers, []config.Table{table}, "")
	p, err := runPass(ctx, cfg, log, want, atEnd)
	return p, cfg, err
}

// runPass starts a node of cfg, waits until it has committed want
// records of its one table and measures the pass: its time and CPU to
// there, then (after atEnd) the memory the process holds.
func runPass(ctx context.Context, cfg config.Config, log *slog.Logger, want int64, atEnd func(context.Context, *node.Node, config.Config) error) (upsertPass, error) {
	var p upsertPass
	stopHeap := sampleHeap(&p.peakHeap)
	cpu0, start := selfCPU(), time.Now()
	n, err := newNode(ctx, cfg, log)
	if err != nil {
		stopHeap()
		return p, err
	}
	defer n.Stop()
	err = waitPassCommitted(ctx, n, want, start)
	p.dur, p.cpu = time.Since(start), selfCPU()-cpu0
	stopHeap()
	if err != nil {
		return p, err
	}
	if atEnd != nil {
		if err := atEnd(ctx, n, cfg); err != nil {
			return p, err
		}
	}
	// Two cycles: the heap profile of heapOf is as of the last one but
	// one, for what the last one freed.
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	p.liveHeap = ms.HeapAlloc
	p.indexHeap = heapOf("go.etcd.io/bbolt.", "sinks/iceberg/upsert.(*Index)", "sinks/iceberg/upsert.OpenIndex")
	p.rssAnon, p.rssFile = procStatusKB(os.Getpid(), "RssAnon")<<10, procStatusKB(os.Getpid(), "RssFile")<<10
	return p, nil
}

// waitPassCommitted waits until the node's first table has committed want
// records over all its partitions: an upsert table's rows count the
// records a flush kept (the last per key), not those it read.
func waitPassCommitted(ctx context.Context, n *node.Node, want int64, start time.Time) error {
	for {
		rep, err := n.Report(ctx)
		if err != nil {
			return err
		}
		if len(rep.Tables) > 0 && committedOf(rep.Tables[0]) == want {
			return nil
		}
		if time.Since(start) > 30*time.Minute {
			return fmt.Errorf("not done after 30 minutes: %d of %d records committed", committedOf(rep.Tables[0]), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func committedOf(t status.TableReport) int64 {
	var c int64
	for _, p := range t.Partitions {
		c += p.Committed
	}
	return c
}

// sampleHeap records in peak the most heap in use (objects, live or not
// yet collected) sampled every 20 ms until the returned stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	var (
		max  atomic.Uint64
		done = make(chan struct{})
		quit = make(chan struct{})
	)
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(s)
		if v := s[0].Value.Uint64(); v > max.Load() {
			max.Store(v)
		}
	}
	go func() {
		defer close(done)
		for {
			read()
			select {
			case <-quit:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() {
		close(quit)
		<-done
		read()
		*peak = max.Load()
	}
}

// readIndex reads the keys of the upsert pass's key index and its
// rebuilds from the node's status.
func (r *upsertRuns) readIndex(ctx context.Context, n *node.Node, _ config.Config) error {
	u, err := settledUpsert(ctx, n)
	if err != nil {
		return err
	}
	if u.Keys != int64(r.keys) {
		return fmt.Errorf("the key index holds %d keys, want %d", u.Keys, r.keys)
	}
	r.indexKeys, r.passRebuilds = u.Keys, u.IndexRebuilds
	return nil
}

// settledUpsert returns the upsert counters once they have not moved for
// 2 s: the committed offsets the pass waits for are durable before the
// commit updates the key index (recordUpsert), so the last commit's
// index update may still be running when the pass's clock stops (the
// records are readable by then), and what it holds must not be counted
// as what the index holds at rest.
func settledUpsert(ctx context.Context, n *node.Node) (status.UpsertStatus, error) {
	var (
		last   status.UpsertStatus
		since  = time.Now()
		quiet  = 2 * time.Second
		before = time.Now().Add(2 * time.Minute)
	)
	for {
		u, err := upsertStatus(ctx, n)
		if err != nil {
			return u, err
		}
		switch {
		case u != last:
			last, since = u, time.Now()
		case time.Since(since) >= quiet:
			return u, nil
		case time.Now().After(before):
			return u, fmt.Errorf("the upsert counters still move after 2 minutes: %+v", u)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func upsertStatus(ctx context.Context, n *node.Node) (status.UpsertStatus, error) {
	rep, err := n.Report(ctx)
	if err != nil {
		return status.UpsertStatus{}, err
	}
	if len(rep.Tables) == 0 || rep.Tables[0].Upsert == nil {
		return status.UpsertStatus{}, fmt.Errorf("no upsert counters in the status")
	}
	return *rep.Tables[0].Upsert, nil
}

// benchRebuild deletes the key index file of the last upsert pass's node,
// sends one more update per partition and restarts the node on its data
// dir: the commit of those updates finds no index and rebuilds it from the
// table (syncIndex), as on a node the committer role moved to.
func (r *upsertRuns) benchRebuild(ctx context.Context, kafka *embedded.Kafka, cfg config.Config, log *slog.Logger) error {
	if err := os.Remove(filepath.Join(cfg.Node.DataDir, "upsert-keys.db")); err != nil {
		return err
	}
	if _, err := produceUpserts(ctx, kafka, r.updates, r.updates+r.partitions, r.keys, r.partitions); err != nil {
		return err
	}
	p, err := runPass(ctx, cfg, log, int64(r.updates+r.partitions), func(ctx context.Context, n *node.Node, _ config.Config) error {
		u, err := settledUpsert(ctx, n)
		if err != nil {
			return err
		}
		if u.IndexRebuilds == 0 {
			return fmt.Errorf("the restarted node did not rebuild its key index: %+v", u)
		}
		r.rebuild = time.Duration(u.RebuildSeconds / float64(u.IndexRebuilds) * float64(time.Second))
		r.rebuilds, r.rebuildKeys = u.IndexRebuilds, u.Keys
		return nil
	})
	r.rebuildPass = p
	return err
}

// ratios returns per pair of passes the upsert throughput over the append
// throughput, by wall time and by CPU.
func (r upsertRuns) ratios() (wall, cpu []float64) {
	for i := range min(len(r.appends), len(r.upserts)) {
		a, u := r.appends[i], r.upserts[i]
		wall = append(wall, a.dur.Seconds()/u.dur.Seconds())
		if u.cpu > 0 {
			cpu = append(cpu, a.cpu/u.cpu)
		}
	}
	return wall, cpu
}

// median of v (the mean of the middle two when even); 0 when empty.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// print writes each pass, the ratios of their medians, the key index's
// size and memory, and the rebuild.
func (r upsertRuns) print(out io.Writer) {
	fmt.Fprintf(out, "%-10s %8s %10s %7s %8s %10s %10s %9s %9s\n", "pass", "seconds", "records/s", "CPU s", "CPU µs/r", "peak heap", "live heap", "RSS anon", "RSS file")
	row := func(name string, p upsertPass, n int) {
		// The rebuild's restart commits a few records: no rate.
		rate, perRec := "-", "-"
		if n > 0 {
			rate, perRec = fmt.Sprintf("%.0f", float64(n)/p.dur.Seconds()), fmt.Sprintf("%.1f", p.cpu/float64(n)*1e6)
		}
		fmt.Fprintf(out, "%-10s %8.2f %10s %7.2f %8s %6.0f MiB %6.0f MiB %5.0f MiB %5.0f MiB\n", name, p.dur.Seconds(), rate,
			p.cpu, perRec, mib(int64(p.peakHeap)), mib(int64(p.liveHeap)), mib(p.rssAnon), mib(p.rssFile))
	}
	for i := range max(len(r.appends), len(r.upserts)) {
		if i < len(r.appends) {
			row(fmt.Sprintf("append %d", i+1), r.appends[i], r.updates)
		}
		if i < len(r.upserts) {
			row(fmt.Sprintf("upsert %d", i+1), r.upserts[i], r.updates)
		}
	}
	if r.rebuildPass.dur > 0 {
		row("rebuild", r.rebuildPass, 0)
	}
	wall, cpu := r.ratios()
	if len(wall) == 0 {
		return
	}
	fmt.Fprintf(out, "\nratio upsert / append throughput: %.3f (median of pairs: %s)   (goal >= 0.5)\n", median(wall), ratioList(wall))
	fmt.Fprintf(out, "ratio by CPU, append CPU / upsert CPU: %.3f (median of pairs: %s)\n", median(cpu), ratioList(cpu))
	perM := func(v float64) float64 { return v / float64(max(r.indexKeys, 1)) * 1e6 }
	x := r.index
	fmt.Fprintf(out, "key index: %d keys; upsert-keys.db %.1f MiB = %.1f MiB per million keys (tree pages %.1f MiB, %.0f%% full; the rest free pages); index rebuilds during the last upsert pass: %d\n",
		r.indexKeys, mib(x.FileBytes), perM(mib(x.FileBytes)), mib(x.PageBytes), 100*float64(x.InuseBytes)/float64(max(x.PageBytes, 1)), r.passRebuilds)
	a, u := r.appends[len(wall)-1], r.upserts[len(wall)-1]
	fmt.Fprintf(out, "memory, last upsert pass minus last append pass (node running, after a GC): live heap %+.1f MiB (of which allocated by the key index's code: %.1f MiB), RSS anon %+.1f MiB, RSS file %+.1f MiB; peak heap %+.1f MiB\n",
		mib(int64(u.liveHeap)-int64(a.liveHeap)), mib(int64(u.indexHeap)), mib(u.rssAnon-a.rssAnon), mib(u.rssFile-a.rssFile), mib(int64(u.peakHeap)-int64(a.peakHeap)))
	if r.rebuilds > 0 {
		fmt.Fprintf(out, "rebuild from the table (index file deleted, node restarted): %d keys in %.2f s = %.2f s per million keys (%d rebuilds in the restart)\n",
			r.rebuildKeys, r.rebuild.Seconds(), r.rebuild.Seconds()/float64(max(r.rebuildKeys, 1))*1e6, r.rebuilds)
	}
	fmt.Fprintf(out, "load average %s\n", r.load)
}

func ratioList(v []float64) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.3f", x)
	}
	return s
}
