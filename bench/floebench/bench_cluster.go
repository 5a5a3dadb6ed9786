package floebench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"gopkg.in/yaml.v3"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/embedded"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/proto/admin"
)

// clusterBench is `floe bench --cluster`: many partitions over a few real
// `floe serve` processes on an in-process kfake broker. It reports memory
// per node, records per second per node while a backlog is materialized, and
// how long a SIGKILLed node's partitions take to be reassigned and fetched
// (recorded) again elsewhere.
type clusterBench struct {
	out        io.Writer
	nodes      int
	partitions int
	topics     int
	perPart    int
	dir        string
	bin        string
	brokers    []string
	// memoryBudget is the nodes' memory_budget (0: the default).
	memoryBudget config.ByteSize
	// configure, when set, changes each node's configuration before it is
	// written (the tables bench's mapping and warehouse).
	configure func(cfg map[string]any)
	// args are more arguments of `floe serve`, by node id.
	args map[string][]string

	procs []*benchProc
}

type benchProc struct {
	id, admin, cfgPath string
	cmd                *exec.Cmd
	peakRSS            atomic.Int64 // bytes
	alive              atomic.Bool
}

func runClusterBench(ctx context.Context, out io.Writer, nodes, partitions, perPart int) error {
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "floe-cbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	topics := 10
	if partitions < topics {
		topics = 1
	}
	b := &clusterBench{out: out, nodes: nodes, partitions: partitions, topics: topics, perPart: perPart, dir: dir, bin: bin}
	names := make([]string, topics)
	for i := range names {
		names[i] = fmt.Sprintf("cb%02d", i)
	}
	kafka, err := embedded.StartKafka(partitions/topics, names...)
	if err != nil {
		return err
	}
	defer kafka.Close()
	b.brokers = kafka.Addrs()
	cl, err := kafka.Producer(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(8<<20))
	if err != nil {
		return err
	}
	defer cl.Close()
	total := int64(partitions/topics*topics) * int64(perPart)
	fmt.Fprintf(out, "floe bench --cluster: %d nodes, %d partitions over %d topics/tables, %d records of ~450 B per partition (%d records)\n\n",
		nodes, partitions/topics*topics, topics, perPart, total)
	if err := b.produce(ctx, cl, names, perPart, 0); err != nil {
		return err
	}
	defer b.stopAll()
	if err := b.measureBacklog(ctx, names, total); err != nil {
		return err
	}
	// A trickle into every partition while a node is killed.
	pctx, stopProducing := context.WithCancel(ctx)
	var pwg sync.WaitGroup
	pwg.Add(1)
	go func() {
		defer pwg.Done()
		for round := 1; pctx.Err() == nil; round++ {
			_ = b.produce(pctx, cl, names, 1, round)
			time.Sleep(200 * time.Millisecond)
		}
	}()
	defer func() { stopProducing(); pwg.Wait() }()
	if err := b.measureFailover(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "\npeak resident memory per node:")
	for _, p := range b.procs {
		fmt.Fprintf(out, "  %s: %.0f MiB\n", p.id, float64(p.peakRSS.Load())/(1<<20))
	}
	return nil
}

// measureBacklog starts the nodes and times them from start until every
// record of the backlog is committed.
func (b *clusterBench) measureBacklog(ctx context.Context, names []string, total int64) error {
	start := time.Now()
	if err := b.startNodes(names); err != nil {
		return err
	}
	go b.sampleMemory(ctx)
	var rep status.Report
	var err error
	for {
		rep, err = b.status(ctx)
		if err == nil && sumRows(rep) >= total {
			break
		}
		if time.Since(start) > 15*time.Minute {
			return fmt.Errorf("backlog not committed after 15 minutes (rows %d of %d, err %v)", sumRows(rep), total, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	backlog := time.Since(start)
	fmt.Fprintf(b.out, "backlog of %d records committed in %.1f s (includes forming the group): %.0f records/s in all, %.0f records/s per node\n",
		total, backlog.Seconds(), float64(total)/backlog.Seconds(), float64(total)/backlog.Seconds()/float64(b.nodes))
	consumed := b.consumedPerNode(ctx)
	for _, p := range b.procs {
		fmt.Fprintf(b.out, "  %s: consumed %d records (%.0f/s), %d partitions\n", p.id, consumed[p.id], float64(consumed[p.id])/backlog.Seconds(), partitionsOf(rep, p.id))
	}
	return nil
}

// measureFailover SIGKILLs a node that is not the leader while records
// trickle in, and times until its partitions are assigned elsewhere and
// until new records of each of them are recorded by a new holder.
func (b *clusterBench) measureFailover(ctx context.Context) error {
	time.Sleep(3 * time.Second)
	rep, err := b.status(ctx)
	if err != nil {
		return err
	}
	var victim *benchProc
	for _, p := range b.procs {
		if p.id != rep.Leader {
			victim = p
			break
		}
	}
	held := map[string]int64{} // partition -> recorded offset when killed
	for _, t := range rep.Tables {
		for _, pr := range t.Partitions {
			if pr.Node == victim.id {
				held[fmt.Sprintf("%s/%d", pr.Topic, pr.Partition)] = pr.Recorded
			}
		}
	}
	killed := time.Now()
	_ = victim.cmd.Process.Signal(syscall.SIGKILL)
	victim.alive.Store(false)
	reassigned, refetched, advancedAt, err := b.waitTakeover(ctx, victim, held, killed)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "\nSIGKILL of %s (held %d partitions): reassigned after %.1f s, all fetched and recorded again elsewhere after %.1f s\n",
		victim.id, len(held), reassigned.Seconds(), refetched.Seconds())
	times := slices.Sorted(maps.Values(advancedAt))
	if len(times) > 0 {
		fmt.Fprintf(b.out, "  per partition, recorded again after: p50 %.1f s, p90 %.1f s, max %.1f s\n",
			times[len(times)/2].Seconds(), times[len(times)*9/10].Seconds(), times[len(times)-1].Seconds())
	}
	fmt.Fprintf(b.out, "  (failure timeout %s and commit interval %s bound it from below: detection, then the new holder records at its next flush)\n", benchFailureTimeout, benchCommitInterval)
	return nil
}

// waitTakeover polls the survivors until every partition the victim held
// has a new holder and has been recorded past where it was when killed.
func (b *clusterBench) waitTakeover(ctx context.Context, victim *benchProc, held map[string]int64, killed time.Time) (reassigned, refetched time.Duration, advancedAt map[string]time.Duration, err error) {
	advancedAt = map[string]time.Duration{}
	for reassigned == 0 || refetched == 0 {
		if time.Since(killed) > 2*time.Minute {
			return 0, 0, nil, fmt.Errorf("partitions of the killed node not taken over after 2 minutes")
		}
		time.Sleep(100 * time.Millisecond)
		rep, err := b.status(ctx)
		if err != nil {
			continue
		}
		moved, advanced := 0, 0
		for _, t := range rep.Tables {
			for _, pr := range t.Partitions {
				key := fmt.Sprintf("%s/%d", pr.Topic, pr.Partition)
				from, ok := held[key]
				if !ok || pr.Node == victim.id || pr.Node == "" {
					continue
				}
				moved++
				if pr.Recorded > from {
					advanced++
					if _, seen := advancedAt[key]; !seen {
						advancedAt[key] = time.Since(killed)
					}
				}
			}
		}
		if reassigned == 0 && moved == len(held) {
			reassigned = time.Since(killed)
		}
		if refetched == 0 && advanced == len(held) {
			refetched = time.Since(killed)
		}
	}
	return reassigned, refetched, advancedAt, nil
}

const (
	benchFailureTimeout = 5 * time.Second
	benchCommitInterval = 2 * time.Second
)

func (b *clusterBench) produce(ctx context.Context, cl *kgo.Client, topics []string, perPart, seed int) error {
	per := b.partitions / len(topics)
	var recs []*kgo.Record
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		err := cl.ProduceSync(ctx, recs...).FirstErr()
		recs = recs[:0]
		return err
	}
	i := seed * b.partitions
	for r := 0; r < perPart; r++ {
		for _, t := range topics {
			for p := range per {
				v := []byte(benchRecord(i))
				i++
				recs = append(recs, &kgo.Record{Topic: t, Partition: int32(p), Value: v})
				if len(recs) == 5000 {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
	}
	return flush()
}

func (b *clusterBench) startNodes(topics []string) error {
	type addrs struct{ raft, admin, rpc string }
	all := make([]addrs, b.nodes)
	var join []string
	for i := range all {
		for _, p := range []*string{&all[i].raft, &all[i].admin, &all[i].rpc} {
			a, err := embedded.FreeAddr()
			if err != nil {
				return err
			}
			*p = a
		}
		join = append(join, all[i].rpc)
	}
	var tables []map[string]any
	for _, t := range topics {
		tables = append(tables, map[string]any{"topic": t, "namespace": "bench", "name": t, "format": "json", "start_offset": "earliest"})
	}
	for i, a := range all {
		id := fmt.Sprintf("node-%d", i+1)
		cfg := map[string]any{
			"node":            map[string]any{"id": id, "data_dir": filepath.Join(b.dir, id), "raft_addr": a.raft, "admin_addr": a.admin, "rpc_addr": a.rpc},
			"cluster":         map[string]any{"bootstrap_expect": b.nodes, "join": join, "failure_timeout": benchFailureTimeout.String()},
			"kafka":           map[string]any{"bootstrap_servers": b.brokers},
			"warehouse":       map[string]any{"location": "file://" + filepath.Join(b.dir, "warehouse")},
			"commit_interval": benchCommitInterval.String(),
			"tables":          tables,
			"log":             map[string]any{"level": "warn"},
		}
		if b.memoryBudget > 0 {
			cfg["memory_budget"] = strconv.FormatInt(int64(b.memoryBudget), 10)
		}
		if b.configure != nil {
			b.configure(cfg)
		}
		raw, err := yaml.Marshal(cfg)
		if err != nil {
			return err
		}
		p := &benchProc{id: id, admin: a.admin, cfgPath: filepath.Join(b.dir, id+".yaml")}
		if err := os.WriteFile(p.cfgPath, raw, 0o644); err != nil {
			return err
		}
		logf, err := os.Create(filepath.Join(b.dir, id+".log"))
		if err != nil {
			return err
		}
		p.cmd = exec.Command(b.bin, append([]string{"serve", "-c", p.cfgPath}, b.args[id]...)...)
		p.cmd.Stdout, p.cmd.Stderr = logf, logf
		if err := p.cmd.Start(); err != nil {
			return err
		}
		p.alive.Store(true)
		b.procs = append(b.procs, p)
	}
	return nil
}

func (b *clusterBench) stopAll() {
	for _, p := range b.procs {
		if p.alive.Load() {
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
		}
		_ = p.cmd.Wait()
	}
}

// status asks the first live node that answers.
func (b *clusterBench) status(ctx context.Context) (status.Report, error) {
	var lastErr error
	for _, p := range b.procs {
		if !p.alive.Load() {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		rep, err := admin.Fetch(cctx, p.admin)
		cancel()
		if err == nil && len(rep.Tables) > 0 {
			return rep, nil
		}
		lastErr = err
	}
	return status.Report{}, fmt.Errorf("no node answered: %v", lastErr)
}

// consumedPerNode sums each node's own consumed counters.
func (b *clusterBench) consumedPerNode(ctx context.Context) map[string]int64 {
	out := map[string]int64{}
	for _, p := range b.procs {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		rep, err := admin.Fetch(cctx, p.admin)
		cancel()
		if err != nil {
			continue
		}
		for _, t := range rep.Tables {
			out[p.id] += t.Consumed
		}
	}
	return out
}

// sampleMemory keeps each node's peak resident set size, read from /proc.
func (b *clusterBench) sampleMemory(ctx context.Context) {
	for ctx.Err() == nil {
		for _, p := range b.procs {
			if !p.alive.Load() {
				continue
			}
			if rss := readRSS(p.cmd.Process.Pid); rss > p.peakRSS.Load() {
				p.peakRSS.Store(rss)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func readRSS(pid int) int64 { return procStatusKB(pid, "VmRSS") << 10 }

// procStatusKB reads field (VmRSS, RssAnon, RssFile...) of process pid's
// /proc status, in kB; 0 when it cannot be read.
func procStatusKB(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				kb, _ := strconv.ParseInt(fields[0], 10, 64)
				return kb
			}
		}
	}
	return 0
}

func sumRows(rep status.Report) int64 {
	var n int64
	for _, t := range rep.Tables {
		n += t.Rows
	}
	return n
}

func partitionsOf(rep status.Report, node string) int {
	i := slices.IndexFunc(rep.Members, func(m status.MemberReport) bool { return m.ID == node })
	if i < 0 {
		return 0
	}
	return rep.Members[i].Partitions
}
