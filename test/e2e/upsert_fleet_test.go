//go:build long

package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestUpsertFleet is the upsert table's correctness proof on a fleet of
// real floe processes: a seeded random keyed stream (50 keys, so each is
// updated many times; one record in five a tombstone; the default
// partitioner, so a key stays in one partition) is produced to an upsert
// table while the table's committer is SIGKILLed at random points, a node
// is added and the committer is drained away, so the committer role (and
// with it the key index) and the partitions move. At the end the table,
// read from its metadata location by iceberg-go's scan (position deletes
// applied), must hold exactly the model's latest value per key (a map built
// from the acknowledged records alone: tombstoned keys absent), and no
// (partition, offset) may be in two data rows, deleted or not. Compaction
// runs every 3 s throughout, so it applies the deletes under the same
// faults; at least one must have committed, and the delete files left
// must be few.
//
// FLOE_UPSERT_SEED replays the stream and the schedule (the cluster's own
// timing still varies), FLOE_UPSERT_DURATION (default 40s) the faults'
// span.
func TestUpsertFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end cluster")
	}
	seed, dur := uint64(time.Now().UnixNano()), 40*time.Second
	if s := os.Getenv("FLOE_UPSERT_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("FLOE_UPSERT_SEED: %v", err)
		}
		seed = v
	}
	if s := os.Getenv("FLOE_UPSERT_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("FLOE_UPSERT_DURATION: %v", err)
		}
		dur = d
	}
	t.Logf("upsert fleet seed %d (replay with FLOE_UPSERT_SEED=%d), duration %s", seed, seed, dur)
	rng := rand.New(rand.NewPCG(seed, seed))
	f := newFleet(t)
	topic := "keyed" + f.topics[0][len("orders"):] // "_<run>" on a real broker
	f.createTopics(topic)
	f.txnTopics = append(f.txnTopics, topic) // mapped, not written by the plain producer
	// Compaction every few seconds: it applies the deletes under the same
	// faults, racing 1-second commits.
	f.tableOpts = map[string]map[string]any{topic: {"mode": "upsert",
		"compaction": map[string]any{"interval": "3s", "min_input_files": 2, "hot_min_input_files": 4}}}
	f.startNew(3, 3, "n", false)
	f.settle(2 * time.Minute)
	load := f.startKeyedLoad(topic, rand.New(rand.NewPCG(seed, seed+1)))
	c := &chaos{f: f, rng: rng, counts: map[string]int{}}
	moves, committer := 0, f.committerOf(topic)
	for i, end := 0, time.Now().Add(dur); time.Now().Before(end); i++ {
		// The fault schedule: 1-4 s of load between faults is the chaos, not a wait.
		time.Sleep(time.Duration(1000+rng.IntN(3000)) * time.Millisecond)
		c.upsertStep(i, topic)
		f.settle(90 * time.Second)
		if now := f.committerOf(topic); now != committer {
			moves++
			f.event("committer of %s moved %s -> %s", tableOf(topic), committer, now)
			committer = now
		}
	}
	f.event("faults over: %v, committer moves seen %d", c.counts, moves)
	produced := load.stop()
	f.checkUpsertTable(topic, produced, load.model(), 2*time.Minute)
}

// upsertStep does the i-th fault: mostly a SIGKILL of the table's
// committer; every fourth a node added (while fewer than five run), and
// every fourth the committer drained and retired (while more than three
// run), so the role and partitions move for good.
func (c *chaos) upsertStep(i int, topic string) {
	f := c.f
	n := f.node(f.committerOf(topic))
	if n == nil {
		f.event("committer of %s not found: killing a random node instead", tableOf(topic))
		n = pick(c.rng, f.running())
	}
	switch {
	case i%4 == 1 && len(f.running()) < 5:
		c.counts["add"]++
		f.event("started %s (join only)", f.startNew(1, 0, "n", false)[0].id)
	case i%4 == 3 && len(f.running()) > 3:
		c.counts["drain-committer"]++
		c.drain(n)
		f.remove(n)
		f.event("%s (the committer) is retired", n.id)
	default:
		c.counts["kill-committer"]++
		// Down 0.5-5 s: sometimes back before the failure timeout (the
		// role stays), sometimes after (it moves).
		down := time.Duration(500+c.rng.IntN(4500)) * time.Millisecond
		f.event("SIGKILL %s (committer of %s), down for %s", n.id, tableOf(topic), down)
		f.kill(n)
		time.Sleep(down) // the fault: down that long, either side of the failure timeout
		f.start(n)
		f.event("restarted %s", n.id)
	}
}

// committerOf returns the node the status shows as the committer of
// topic's table, "" when none answers.
func (f *fleet) committerOf(topic string) string {
	rep, _, err := f.status()
	if err != nil {
		return ""
	}
	tr, _ := tableReport(rep, tableOf(topic))
	return tr.Committer
}

// keyedRec is one acknowledged record of the keyed load.
type keyedRec struct {
	key  string
	part int32
	off  int64
	val  string
	tomb bool
}

// keyedLoad produces a random keyed stream with the default partitioner
// every 100 ms until stopped, and keeps every acknowledged record.
type keyedLoad struct {
	f      *fleet
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan error

	mu   sync.Mutex
	recs []keyedRec
	part map[string]int32 // key -> its partition
}

const keyedKeys = 50

func (f *fleet) startKeyedLoad(topic string, rng *rand.Rand) *keyedLoad {
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.brokers...), kgo.DefaultProduceTopic(topic)) // the default (key hash) partitioner
	if err != nil {
		f.t.Fatal(err)
	}
	l := &keyedLoad{f: f, cl: cl, done: make(chan error, 1), part: map[string]int32{}}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go func() {
		defer close(l.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ctx.Err() == nil; n++ {
			if err := l.round(rng, n); err != nil {
				l.done <- err
				return
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	}()
	f.t.Cleanup(func() { l.cancel(); <-l.done; cl.Close() })
	return l
}

// round produces 20 records of random keys, one in five a tombstone.
func (l *keyedLoad) round(rng *rand.Rand, n int) error {
	var recs []*kgo.Record
	vals := map[*kgo.Record]string{}
	for j := range 20 {
		k := fmt.Sprintf("k%d", rng.IntN(keyedKeys))
		r := &kgo.Record{Key: []byte(k)}
		if rng.IntN(5) != 0 {
			vals[r] = fmt.Sprintf("v%d-%d", n, j)
			r.Value = fmt.Appendf(nil, `{"id":%q,"v":%q}`, k, vals[r])
		}
		recs = append(recs, r)
	}
	// Not cancelled with the load: a produce cut short would leave
	// records of unknown fate in Kafka.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := l.cl.ProduceSync(ctx, recs...)
	if err := res.FirstErr(); err != nil {
		return fmt.Errorf("producing: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range res {
		k := string(r.Record.Key)
		if p, ok := l.part[k]; ok && p != r.Record.Partition {
			return fmt.Errorf("key %s went to partition %d and %d: not the default partitioner", k, p, r.Record.Partition)
		}
		l.part[k] = r.Record.Partition
		l.recs = append(l.recs, keyedRec{key: k, part: r.Record.Partition, off: r.Record.Offset,
			val: vals[r.Record], tomb: r.Record.Value == nil})
	}
	return nil
}

// stop ends production and returns the next offset of each partition.
func (l *keyedLoad) stop() map[int32]int64 {
	l.cancel()
	if err := <-l.done; err != nil {
		l.f.t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	next := map[int32]int64{}
	for _, r := range l.recs {
		next[r.part] = max(next[r.part], r.off+1)
	}
	l.f.event("keyed load stopped: %d records acknowledged, %d keys, partitions %v", len(l.recs), len(l.part), next)
	return next
}

// model is the latest value per key, by Kafka's order (offset within the
// key's partition), built only from what the broker acknowledged:
// tombstoned keys are absent.
func (l *keyedLoad) model() map[string]string {
	l.mu.Lock()
	recs := slices.Clone(l.recs)
	l.mu.Unlock()
	slices.SortFunc(recs, func(a, b keyedRec) int {
		if a.part != b.part {
			return int(a.part - b.part)
		}
		return int(a.off - b.off)
	})
	out := map[string]string{}
	for _, r := range recs {
		if r.tomb {
			delete(out, r.key)
		} else {
			out[r.key] = r.val
		}
	}
	return out
}

// checkUpsertTable waits until the table of topic has committed every
// produced offset, then reads it from its metadata location, without
// Floe: the live rows (deletes applied) must be exactly model, and no
// (partition, offset) may be in two rows of its data files.
func (f *fleet) checkUpsertTable(topic string, produced map[int32]int64, model map[string]string, timeout time.Duration) {
	f.t.Helper()
	var loc string
	err := wait.Poll(timeout, func() error {
		f.checkCrashes()
		rep, _, err := f.status()
		if err != nil {
			return err
		}
		tr, ok := tableReport(rep, tableOf(topic))
		if !ok {
			return errors.New("no table yet")
		}
		for _, p := range tr.Partitions {
			if p.Committed != produced[p.Partition] {
				return fmt.Errorf("partition %d committed %d of %d", p.Partition, p.Committed, produced[p.Partition])
			}
		}
		loc = tr.MetadataLocation
		return nil
	})
	if err != nil {
		f.t.Fatalf("%s not caught up after %s: %v", tableOf(topic), timeout, err)
	}
	ctx := context.Background()
	tbl, err := table.NewFromLocation(ctx, table.Identifier{fleetNamespace, topic}, loc,
		icebergio.LoadFSFunc(node.IOProps(f.wh), loc), nil)
	if err != nil {
		f.t.Fatalf("loading %s from %s: %v", tableOf(topic), loc, err)
	}
	got, err := liveValues(ctx, tbl)
	if err != nil {
		f.t.Fatal(err)
	}
	for k, want := range model {
		if got[k] != want {
			f.t.Errorf("key %s reads %q, want %q (the model's latest)", k, got[k], want)
		}
	}
	for k, v := range got {
		if _, ok := model[k]; !ok {
			f.t.Errorf("key %s reads %q, want no row (tombstoned)", k, v)
		}
	}
	rows, err := dataFileOffsets(ctx, tbl)
	if err != nil {
		f.t.Fatal(err)
	}
	compactions := 0
	for _, sn := range tbl.Metadata().Snapshots() {
		if sn.Summary != nil && sn.Summary.Properties["floe.operation"] == "compaction" {
			compactions++
		}
	}
	dels := 0
	if sum := tbl.CurrentSnapshot().Summary; sum != nil {
		dels, _ = strconv.Atoi(sum.Properties["total-position-deletes"])
		deleteFiles, _ := strconv.Atoi(sum.Properties["total-delete-files"])
		if compactions == 0 || deleteFiles > 40 {
			f.t.Errorf("%d compactions, %d delete files left: want compactions to keep them few", compactions, deleteFiles)
		}
		f.event("%d compactions in the snapshot log; %d delete files (%d deleted rows) left", compactions, deleteFiles, dels)
	}
	f.event("upsert table read back: %d live keys as the model, %d data rows (deleted included), none twice", len(got), rows)
}

// liveValues scans tbl (position deletes applied) into key -> v, failing
// on a key or a (partition, offset) with two live rows.
func liveValues(ctx context.Context, tbl *table.Table) (map[string]string, error) {
	arr, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		return nil, fmt.Errorf("scanning: %w", err)
	}
	defer arr.Release()
	col := func(name string) int {
		if i := arr.Schema().FieldIndices(name); len(i) > 0 {
			return i[0]
		}
		return -1
	}
	if col("v") < 0 {
		return nil, errors.New("scanning: no column v")
	}
	got, seen := map[string]string{}, map[string]bool{}
	for r := array.NewTableReader(arr, 1024); r.Next(); {
		rec := r.RecordBatch()
		part := rec.Column(col("_kafka_partition")).(*array.Int32)
		off := rec.Column(col("_kafka_offset")).(*array.Int64)
		key := rec.Column(col("_kafka_key")).(*array.Binary)
		val := rec.Column(col("v")).(*array.String)
		for i := range int(rec.NumRows()) {
			po := fmt.Sprintf("%d/%d", part.Value(i), off.Value(i))
			if seen[po] {
				return nil, fmt.Errorf("offset %s has two live rows", po)
			}
			seen[po] = true
			k := string(key.Value(i))
			if _, dup := got[k]; dup {
				return nil, fmt.Errorf("key %s has two live rows", k)
			}
			got[k] = val.Value(i)
		}
	}
	return got, nil
}

// dataFileOffsets reads (partition, offset) of every row of tbl's data
// files, deletes not applied, and fails on one read twice: a record
// committed twice, even if a later row of its key deleted both.
func dataFileOffsets(ctx context.Context, tbl *table.Table) (int, error) {
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return 0, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return 0, err
	}
	seen := map[[2]int64]string{}
	for _, t := range tasks {
		path := t.File.FilePath()
		parts, offs, err := readPartOffsets(ctx, fs, path)
		if err != nil {
			return 0, err
		}
		for i := range parts {
			po := [2]int64{int64(parts[i]), offs[i]}
			if other, dup := seen[po]; dup {
				return 0, fmt.Errorf("partition %d offset %d is in %s and %s", po[0], po[1], other, path)
			}
			seen[po] = path
		}
	}
	return len(seen), nil
}

func readPartOffsets(ctx context.Context, fs icebergio.IO, path string) ([]int32, []int64, error) {
	fh, err := fs.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	pf, err := file.NewParquetReader(fh)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	tb, err := fr.ReadTable(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer tb.Release()
	var parts []int32
	var offs []int64
	pi, oi := tb.Schema().FieldIndices("_kafka_partition"), tb.Schema().FieldIndices("_kafka_offset")
	if len(pi) == 0 || len(oi) == 0 {
		return nil, nil, fmt.Errorf("reading %s: no partition or offset column", path)
	}
	for _, ch := range tb.Column(pi[0]).Data().Chunks() {
		parts = append(parts, ch.(*array.Int32).Int32Values()...)
	}
	for _, ch := range tb.Column(oi[0]).Data().Chunks() {
		offs = append(offs, ch.(*array.Int64).Int64Values()...)
	}
	return parts, offs, nil
}
