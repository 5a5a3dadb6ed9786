package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/control"
	"github.com/floe-io/floe/worker/source"
)

// fakeKafka is an in-memory broker: partitions are slices of messages.
type fakeKafka struct {
	mu     sync.Mutex
	topics map[string][][]source.Message
	more   chan struct{} // closed and replaced on every produce
	down   bool
	onErr  map[ledger.TopicPartition]func(error)

	readers int // NewReader calls
	reads   int // Read calls, blocked ones included
	// open counts the readers of each partition not closed yet: a test
	// that asserts nothing more is fetched waits for them to close.
	open map[ledger.TopicPartition]int
	// health is what Health returns (source health tests set it).
	health source.Health
}

func (k *fakeKafka) Health() source.Health {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.health
}

func (k *fakeKafka) setHealth(h source.Health) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.health = h
}

func newFakeKafka() *fakeKafka {
	return &fakeKafka{topics: map[string][][]source.Message{}, more: make(chan struct{})}
}

func (k *fakeKafka) produce(topic string, partitions int, values ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.topics[topic] == nil {
		k.topics[topic] = make([][]source.Message, partitions)
	}
	for i, v := range values {
		p := i % len(k.topics[topic])
		off := int64(len(k.topics[topic][p]))
		k.topics[topic][p] = append(k.topics[topic][p], source.Message{Offset: off, Value: []byte(v), Time: time.UnixMilli(1_700_000_000_000 + off)})
	}
	close(k.more)
	k.more = make(chan struct{})
}

func (k *fakeKafka) Topics(context.Context) (map[string]int32, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.down {
		return nil, errors.New("dial tcp 127.0.0.1:9: connection refused")
	}
	out := map[string]int32{}
	for t, ps := range k.topics {
		out[t] = int32(len(ps))
	}
	return out, nil
}

func (k *fakeKafka) Offsets(_ context.Context, topic string, parts []int32, latest bool) (map[int32]int64, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[int32]int64{}
	for _, p := range parts {
		if latest {
			out[p] = int64(len(k.topics[topic][p]))
		} else {
			out[p] = 0
		}
	}
	return out, nil
}

func (k *fakeKafka) NewReader(tp ledger.TopicPartition, offset int64, _ int32, onErr func(error)) source.PartitionReader {
	k.mu.Lock()
	if k.onErr == nil {
		k.onErr = map[ledger.TopicPartition]func(error){}
	}
	k.onErr[tp] = onErr
	k.readers++
	if k.open == nil {
		k.open = map[ledger.TopicPartition]int{}
	}
	k.open[tp]++
	k.mu.Unlock()
	return &fakeReader{k: k, tp: tp, next: offset}
}

func (k *fakeKafka) readerError(tp ledger.TopicPartition, err error) {
	k.mu.Lock()
	fn := k.onErr[tp]
	k.mu.Unlock()
	if fn != nil {
		fn(err)
	}
}

type fakeReader struct {
	k    *fakeKafka
	tp   ledger.TopicPartition
	next int64
}

func (r *fakeReader) Read(ctx context.Context) (source.Message, error) {
	r.k.mu.Lock()
	r.k.reads++
	r.k.mu.Unlock()
	for {
		r.k.mu.Lock()
		msgs := r.k.topics[r.tp.Topic][r.tp.Partition]
		more := r.k.more
		if r.next < int64(len(msgs)) {
			m := msgs[r.next]
			m.HighWatermark = int64(len(msgs))
			r.next++
			r.k.mu.Unlock()
			return m, nil
		}
		r.k.mu.Unlock()
		select {
		case <-ctx.Done():
			return source.Message{}, ctx.Err()
		case <-more:
		}
	}
}

func (r *fakeReader) Close() error {
	r.k.mu.Lock()
	defer r.k.mu.Unlock()
	r.k.open[r.tp]--
	return nil
}

// openReaders returns how many readers of tp (of any partition when tp is
// nil) are open.
func (k *fakeKafka) openReaders(tp *ledger.TopicPartition) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	if tp != nil {
		return k.open[*tp]
	}
	n := 0
	for _, c := range k.open {
		n += c
	}
	return n
}

// counts returns how many readers were created and reads made so far.
func (k *fakeKafka) counts() (readers, reads int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.readers, k.reads
}

// fakeCluster is the replicated state (a real ledger) and a sink that keeps
// committed records in memory.
type fakeCluster struct {
	mu            sync.Mutex
	assignedCalls int // Assigned calls: one per reconcile pass (and per discovery)
	l             *ledger.Ledger
	sources       []Source
	committers    map[string]ledger.Assignment
	resumeGen     map[string]uint64
	schemaReqs    map[string][]control.SchemaRequest
	tables        map[string]*records.Shape // created by Prepare: key -> columns
	// prepares records each Prepare and EvolveSchema: the role that fenced
	// it (nil: a pipeline's, unfenced) and whether it added columns to an
	// existing table.
	prepares []fakePrepare
	skips    map[string]map[ledger.TopicPartition]int64 // cleared as the ledger commits past them
	// Watch and WatchTable: see watch_fakes_test.go.
	watches
	node string

	files     map[string][]*records.Record // written, by path
	committed map[string][]*records.Record // table key (or key+"_dlq") -> rows
	failWrite int                          // fail this many writes
	writeGate chan struct{}                // when set, writes wait until it closes
	refuseOne bool                         // refuse the next RecordFiles as a gap

	failShape   bool  // Shape fails: the pipeline never gets past loading the schema
	failCommit  bool  // every Commit fails (retryable)
	fenceCommit error // every Commit is refused with it
	commitCalls int

	// Maintenance calls record the role they were fenced by.
	expireIntents, orphanIntents, rewriteIntents []*fenceCall
	orphanGate                                   chan struct{} // when set, CleanOrphans waits until it closes
	orphanErr                                    error         // what CleanOrphans returns
	rewrite                                      sink.Rewrite  // what PlanRewrite returns
	// settleFails is how many Settle calls fail before one succeeds;
	// settles counts the calls.
	settleFails, settles int
	// committerReads counts Committer calls: a commit loop makes one per
	// round, so a test can wait for rounds instead of sleeping;
	// committerReadsOf counts them per table.
	committerReads   int
	committerReadsOf map[string]int
	// recordedRequested counts, per table, the entries recorded while the
	// table had a schema request pending.
	recordedRequested map[string]int
}

// errFakeFenced is the fake catalog's stale-committer refusal, the
// sentinel the replicated state refuses with.
var errFakeFenced = fmt.Errorf("fake catalog: %w", ledger.ErrStaleCommitter)

func newFakeCluster(node string) *fakeCluster {
	return &fakeCluster{l: ledger.New(), committers: map[string]ledger.Assignment{}, watches: newWatches(), node: node,
		committerReadsOf: map[string]int{}, files: map[string][]*records.Record{}, committed: map[string][]*records.Record{}}
}

func (c *fakeCluster) Position(table string, tp ledger.TopicPartition) (ledger.Offsets, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.l.Position(table, tp)
}

func (c *fakeCluster) Assigned(node string) map[ledger.TopicPartition]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.assignedCalls++
	out := map[ledger.TopicPartition]uint64{}
	for _, s := range c.sources {
		for p := range s.Partitions {
			tp := ledger.TopicPartition{Topic: s.Topic, Partition: p}
			if a, ok := c.l.Assignments[tp.String()]; ok && a.Node == node {
				out[tp] = a.Epoch
			}
		}
	}
	return out
}

func (c *fakeCluster) Holders(table string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	nodes := map[string]bool{}
	for _, s := range c.sources {
		if s.Table != table {
			continue
		}
		for p := range s.Partitions {
			if a, ok := c.l.Assignments[ledger.TopicPartition{Topic: s.Topic, Partition: p}.String()]; ok {
				nodes[a.Node] = true
			}
		}
	}
	return len(nodes)
}

func (c *fakeCluster) Pending(table string) []ledger.Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ledger.Entry(nil), c.l.Pending[table]...)
}

func (c *fakeCluster) Committer(table string) (ledger.Assignment, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.committerReads++
	c.committerReadsOf[table]++
	a, ok := c.committers[table]
	return a, ok
}

func (c *fakeCluster) Resume(table string) (uint64, map[ledger.TopicPartition]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[ledger.TopicPartition]int64{}
	for tp, off := range c.skips[table] {
		if o, ok := c.l.Position(table, tp); !ok || o.Committed <= off {
			out[tp] = off
		}
	}
	return c.resumeGen[table], out
}

func (c *fakeCluster) ResumeTable(_ context.Context, table string, skips map[ledger.TopicPartition]int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.resumeGen == nil {
		c.resumeGen, c.skips = map[string]uint64{}, map[string]map[ledger.TopicPartition]int64{}
	}
	c.resumeGen[table]++
	if c.skips[table] == nil {
		c.skips[table] = map[ledger.TopicPartition]int64{}
	}
	maps.Copy(c.skips[table], skips)
	c.notify(table)
	return nil
}

type fakePrepare struct {
	intent  *fenceCall // nil: a pipeline's, unfenced
	evolved bool
}

func (c *fakeCluster) SchemaRequests(table string) []control.SchemaRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.schemaReqs[table])
}

func (c *fakeCluster) RequestSchema(_ context.Context, table string, req control.SchemaRequest) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.schemaReqs == nil {
		c.schemaReqs = map[string][]control.SchemaRequest{}
	}
	if !slices.ContainsFunc(c.schemaReqs[table], func(r control.SchemaRequest) bool { return r.ID == req.ID }) {
		req.Shape = req.Shape.Clone()
		c.schemaReqs[table] = append(c.schemaReqs[table], req)
	}
	c.notify(table)
	return nil
}

func (c *fakeCluster) SchemaApplied(_ context.Context, table string, ids []string, errMsg string, committer ledger.Assignment) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.committers[table] != committer {
		return errFakeFenced
	}
	reqs := slices.Clone(c.schemaReqs[table])
	for i := range reqs {
		if slices.Contains(ids, reqs[i].ID) {
			reqs[i].Err = errMsg
		}
	}
	if errMsg == "" {
		reqs = slices.DeleteFunc(reqs, func(r control.SchemaRequest) bool { return slices.Contains(ids, r.ID) })
	}
	c.schemaReqs[table] = reqs
	c.notify(table)
	return nil
}

func (c *fakeCluster) RecordFiles(_ context.Context, table string, e ledger.Entry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refuseOne {
		c.refuseOne = false
		return fmt.Errorf("injected: %w", ledger.ErrGap)
	}
	if err := c.l.Record(table, e); err != nil {
		return err
	}
	if len(c.schemaReqs[table]) > 0 {
		if c.recordedRequested == nil {
			c.recordedRequested = map[string]int{}
		}
		c.recordedRequested[table]++
	}
	c.notify(table)
	return nil
}

// RegisterSources also plays the assignment controller: everything goes to
// this node at epoch 1, and the node commits every table.
func (c *fakeCluster) RegisterSources(_ context.Context, s []Source) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	touched := c.sourceTables() // before and after: a topic may move
	c.sources = s
	for _, src := range s {
		for p := range src.Partitions {
			tp := ledger.TopicPartition{Topic: src.Topic, Partition: p}
			if _, ok := c.l.Assignments[tp.String()]; !ok {
				_ = c.l.Assign(tp, ledger.Assignment{Node: c.node, Epoch: 1})
			}
		}
		if _, ok := c.committers[src.Table]; !ok {
			c.committers[src.Table] = ledger.Assignment{Node: c.node, Epoch: 1}
		}
	}
	c.notify(append(touched, c.sourceTables()...)...)
	return nil
}

// reassign moves a partition to node at the next epoch, which it returns.
func (c *fakeCluster) reassign(tp ledger.TopicPartition, node string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.l.Assignments[tp.String()]
	_ = c.l.Assign(tp, ledger.Assignment{Node: node, Epoch: a.Epoch + 1})
	c.notifyPartition(tp)
	return a.Epoch + 1
}

func (c *fakeCluster) setFailShape(fail bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failShape = fail
}

func (c *fakeCluster) Shape(_ context.Context, t sink.TableSpec) (*records.Shape, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failShape {
		return nil, errors.New("injected: catalog unreachable")
	}
	if sh := c.tables[t.Key]; sh != nil {
		return sh.Clone(), nil
	}
	return nil, nil
}

// Prepare creates the table or adds the shape's fields as columns; a
// column change of an existing table is refused unless fenced by the
// current committer (the single writer).
func (c *fakeCluster) Prepare(_ context.Context, t sink.TableSpec, shape *records.Shape) error {
	return c.prepare(t, shape, nil)
}

// EvolveSchema is Prepare fenced by committer.
func (c *fakeCluster) EvolveSchema(_ context.Context, t sink.TableSpec, shape *records.Shape, committer ledger.Assignment, at time.Time) error {
	return c.prepare(t, shape, fenced(t.Key, committer, at))
}

func (c *fakeCluster) prepare(t sink.TableSpec, shape *records.Shape, in *fenceCall) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if shape == nil {
		return nil
	}
	if c.tables == nil {
		c.tables = map[string]*records.Shape{}
	}
	cur := c.tables[t.Key]
	evolved := cur != nil && shape.HasUncommitted()
	c.prepares = append(c.prepares, fakePrepare{intent: in, evolved: evolved})
	if evolved && (in == nil || in.Committer == nil || *in.Committer != c.committers[t.Key]) {
		return fmt.Errorf("injected: a column change of %s not made by its committer", t.Key)
	}
	next := shape.Clone()
	markCommitted(next)
	c.tables[t.Key] = next
	return nil
}

func markCommitted(s *records.Shape) {
	if s == nil {
		return
	}
	for _, f := range s.Fields {
		f.Committed = true
		markCommitted(f.Shape)
	}
	markCommitted(s.Elem)
}

func (c *fakeCluster) Write(_ context.Context, t sink.TableSpec, id string, recs []*records.Record) ([]ledger.FileDescriptor, error) {
	return c.write(t.Key, id, recs)
}

func (c *fakeCluster) WriteDLQ(_ context.Context, t sink.TableSpec, id string, recs []*records.Record) ([]ledger.FileDescriptor, error) {
	return c.write(t.Key+"_dlq", id, recs)
}

func (c *fakeCluster) write(key, id string, recs []*records.Record) ([]ledger.FileDescriptor, error) {
	c.mu.Lock()
	gate := c.writeGate
	c.mu.Unlock()
	if gate != nil {
		<-gate
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failWrite > 0 {
		c.failWrite--
		return nil, errors.New("injected: bucket unreachable")
	}
	path := key + "/" + id
	c.files[path] = append([]*records.Record(nil), recs...)
	return []ledger.FileDescriptor{{Path: path, RecordCount: int64(len(recs))}}, nil
}

func (c *fakeCluster) Commit(_ context.Context, table string, entries []ledger.Entry, committer ledger.Assignment, _ time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.commitCalls++
	if cur := c.committers[table]; cur != committer {
		return fmt.Errorf("committing %s as %s epoch %d: %w", table, committer.Node, committer.Epoch, errFakeFenced)
	}
	if c.fenceCommit != nil {
		return fmt.Errorf("committing %s as %s epoch %d: %w", table, committer.Node, committer.Epoch, c.fenceCommit)
	}
	if c.failCommit {
		return errors.New("injected: catalog unavailable")
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.ID)
	}
	done, err := c.l.Commit(table, ids)
	if err != nil {
		return err
	}
	for _, e := range done {
		for _, f := range e.Files {
			c.committed[table] = append(c.committed[table], c.files[f.Path]...)
		}
		for _, f := range e.DLQFiles {
			c.committed[table+"_dlq"] = append(c.committed[table+"_dlq"], c.files[f.Path]...)
		}
	}
	c.notify(table, table+"_dlq") // the dead-letter table moves with it
	return nil
}

// rows returns committed rows of a table as "partition/offset" -> count.
func (c *fakeCluster) rows(key string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for _, r := range c.committed[key] {
		out[fmt.Sprintf("%d/%d", r.Partition, r.Offset)]++
	}
	return out
}

// setCommitter moves a table's committer role.
func (c *fakeCluster) setCommitter(table string, a ledger.Assignment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.committers[table] = a
	c.notify(table)
}

func (c *fakeCluster) Expire(_ context.Context, table string, _ time.Duration, _ int, now time.Time, committer ledger.Assignment) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireIntents = append(c.expireIntents, fenced(table, committer, now))
	return 0, nil
}

// CleanOrphans commits nothing, so it has no commit time: the fake stamps
// the call's.
func (c *fakeCluster) CleanOrphans(ctx context.Context, table string, _ time.Duration, _ map[string]bool, committer ledger.Assignment) (int, int64, error) {
	c.mu.Lock()
	c.orphanIntents = append(c.orphanIntents, fenced(table, committer, time.Now()))
	gate, err := c.orphanGate, c.orphanErr
	c.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
	}
	return 0, 0, err
}

func (c *fakeCluster) PlanRewrite(context.Context, string, sink.CompactionPolicy) (sink.Rewrite, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rewrite, nil
}

func (c *fakeCluster) CommitRewrite(_ context.Context, table string, _ sink.Rewrite, committer ledger.Assignment, at time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rewriteIntents = append(c.rewriteIntents, fenced(table, committer, at))
	return nil
}

// fakeRewrite is a planned compaction of one file.
type fakeRewrite struct{}

func (fakeRewrite) Stats() sink.RewriteStats {
	return sink.RewriteStats{FilesBefore: 2, FilesAfter: 1, BytesBefore: 10, BytesAfter: 10}
}

// Control implements State: the fake cluster has no operator controls.
func (c *fakeCluster) Control(string) control.TableControl { return control.TableControl{} }

// Mappings implements State: no API mappings.
func (c *fakeCluster) Mappings() []config.Table { return nil }

// DeleteFrom implements Sink; the fake never rewinds.
func (c *fakeCluster) DeleteFrom(context.Context, string, map[ledger.TopicPartition]int64, uint64, ledger.Assignment, time.Time) (int64, error) {
	return 0, errors.New("fake sink: DeleteFrom not supported")
}

func (c *fakeCluster) Settle(context.Context, string, ledger.Assignment, time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settles++
	if c.settleFails > 0 {
		c.settleFails--
		return errors.New("fake sink: the dead-letter mirror is unreachable")
	}
	return nil
}

// payload is a written record's decoded value: Value, or its JSON when the
// fetcher kept it as fetched (numbers as json.Number, which print as
// written).
func payload(t testing.TB, r *records.Record) map[string]any {
	t.Helper()
	if r.JSON == nil {
		return r.Value
	}
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.JSON))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("record %s/%d@%d held as JSON %q: %v", r.Topic, r.Partition, r.Offset, r.JSON, err)
	}
	return v
}
