package source

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/wait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testCluster is a one-broker kfake cluster with topic t of two partitions,
// n records of size bytes in each, and a KafkaClient on it.
func testCluster(t *testing.T, n, size int) *KafkaClient {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("t"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(8<<10), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	value := make([]byte, size)
	for p := range int32(2) {
		for i := range n {
			rec := &kgo.Record{Partition: p, Key: fmt.Appendf(nil, "%d", i), Value: value}
			cl.Produce(context.Background(), rec, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Error(err)
				}
			})
		}
	}
	if err := cl.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	k, err := NewKafkaClient(config.Kafka{BootstrapServers: kc.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// readOffsets reads until it has read the record at last and returns the
// offsets read.
func readOffsets(t *testing.T, r PartitionReader, last int64) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []int64
	for {
		m, err := r.Read(ctx)
		if err != nil {
			t.Fatalf("reading after %d records (last %v): %v", len(got), got[max(len(got)-1, 0):], err)
		}
		got = append(got, m.Offset)
		if m.Offset >= last {
			return got
		}
	}
}

// checkRun fails unless offsets are first, first+1, ... (no gap, nothing
// twice, in order: the topic has no transactions).
func checkRun(t *testing.T, got []int64, first int64) {
	t.Helper()
	for i, off := range got {
		if off != first+int64(i) {
			t.Fatalf("offset %d of the reader opened at %d is %d, want %d (read %v...)", i, first, off, first+int64(i), got[:min(len(got), 10)])
		}
	}
}

// A partition read past 100 and closed, then read again from another
// offset on the same client (partition 1's reader keeps the client open):
// the new reader starts at its offset, never sees a record fetched for the
// first registration, and reads in order to the end.
func TestReopenPartitionAtAnotherOffset(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reopen int64
	}{
		{"back to 40", 40},
		{"on to 150", 150},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := testCluster(t, 200, 100)
			tp := ledger.TopicPartition{Topic: "t", Partition: 0}
			other := k.NewReader(ledger.TopicPartition{Topic: "t", Partition: 1}, 0, 1<<20, nil)
			defer other.Close()
			checkRun(t, readOffsets(t, other, 10), 0)

			first := k.NewReader(tp, 0, 1<<20, nil)
			checkRun(t, readOffsets(t, first, 100), 0)
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := first.Read(context.Background()); !errors.Is(err, ErrReaderClosed) {
				t.Fatalf("read after close: %v, want ErrReaderClosed", err)
			}
			again := k.NewReader(tp, tc.reopen, 1<<20, nil)
			defer again.Close()
			checkRun(t, readOffsets(t, again, 199), tc.reopen)
			if n := len(k.readers.lanes); n != 1 {
				t.Fatalf("%d clients, want 1", n)
			}
		})
	}
}

// A reader never read must not hold the others back: its partition is
// paused with a bounded queue while the other partition is read to its
// end, and its records all arrive, in order, once it is read.
func TestSlowReaderPausesOnlyItsPartition(t *testing.T) {
	const n, size, fetch = 1000, 1 << 10, 16 << 10
	k := testCluster(t, n, size)
	slow := k.NewReader(ledger.TopicPartition{Topic: "t", Partition: 0}, 0, fetch, nil)
	defer slow.Close()
	fast := k.NewReader(ledger.TopicPartition{Topic: "t", Partition: 1}, 0, fetch, nil)
	defer fast.Close()
	checkRun(t, readOffsets(t, fast, n-1), 0)

	reg := slow.(*sharedReader).reg
	l := reg.lane
	wait.For(t, 10*time.Second, "the slow partition paused", func() bool {
		return len(l.cl.PauseFetchPartitions(nil)["t"]) == 1
	})
	reg.mu.Lock()
	queued := reg.queued
	reg.mu.Unlock()
	// Paused once its queue holds fetch bytes: at most one more fetch of
	// the partition (fetch bytes, past them by a batch) got in.
	if limit := int64(3 * fetch); queued > limit || queued < fetch {
		t.Fatalf("slow partition queues %d bytes, want between %d and %d", queued, fetch, limit)
	}
	checkRun(t, readOffsets(t, slow, n-1), 0)
	wait.For(t, 10*time.Second, "the slow partition resumed", func() bool {
		return len(l.cl.PauseFetchPartitions(nil)) == 0
	})
}

// Closing every reader stops the client and its goroutine (goleak checks
// the goroutines at the end).
func TestLastCloseStopsTheClient(t *testing.T) {
	k := testCluster(t, 10, 10)
	var rs []PartitionReader
	for p := range int32(2) {
		r := k.NewReader(ledger.TopicPartition{Topic: "t", Partition: p}, 0, 1<<20, nil)
		checkRun(t, readOffsets(t, r, 9), 0)
		rs = append(rs, r)
	}
	// A second reader of a partition already read is served by a second
	// client: one client reads a partition once.
	dup := k.NewReader(ledger.TopicPartition{Topic: "t", Partition: 0}, 5, 1<<20, nil)
	checkRun(t, readOffsets(t, dup, 9), 5)
	if n := len(k.readers.lanes); n != 2 {
		t.Fatalf("%d clients for two readers of one partition, want 2", n)
	}
	for _, r := range append(rs, dup) {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(k.readers.lanes); n != 0 {
		t.Fatalf("%d clients after the last close, want 0", n)
	}
}

// A fetch error of one partition reaches that partition's reader, and no
// other: "denied" is led by broker 1, whose fetches all answer
// TOPIC_AUTHORIZATION_FAILED, while "t", led by broker 0, reads on through
// the same client.
func TestFetchErrorReachesOnlyItsReader(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.SeedTopics(1, "t", "denied"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	for topic, node := range map[string]int32{"t": 0, "denied": 1} {
		if err := kc.MoveTopicPartition(topic, 0, node); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(topic string, n int) {
		for i := range n {
			if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce("t", 5)
	produce("denied", 5)
	kc.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		if kc.CurrentNode() != 1 {
			return nil, nil, false
		}
		req := kreq.(*kmsg.FetchRequest)
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.Version = req.Version
		for _, rt := range req.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})

	k, err := NewKafkaClient(config.Kafka{BootstrapServers: kc.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	// Full fetch requests, so broker 1's answers name every partition.
	k.readers.opts = append(k.readers.opts, kgo.DisableFetchSessions())
	var mu sync.Mutex
	errs := map[string][]error{}
	onError := func(topic string) func(error) {
		return func(err error) { mu.Lock(); errs[topic] = append(errs[topic], err); mu.Unlock() }
	}
	live := k.NewReader(ledger.TopicPartition{Topic: "t"}, 0, 1<<20, onError("t"))
	defer live.Close()
	denied := k.NewReader(ledger.TopicPartition{Topic: "denied"}, 0, 1<<20, onError("denied"))
	defer denied.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := denied.Read(ctx); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("denied partition's read: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	checkRun(t, readOffsets(t, live, 4), 0)
	produce("t", 5)
	checkRun(t, readOffsets(t, live, 9), 5)
	mu.Lock()
	defer mu.Unlock()
	if len(errs["t"]) > 0 || len(errs["denied"]) == 0 {
		t.Fatalf("onError calls: t %v, denied %v; want none for t, some for denied", errs["t"], errs["denied"])
	}
}

// Read committed through the shared client: an aborted transaction's
// records never arrive, every commit and abort marker arrives flagged as
// Control (so a range ends past it), and the high watermark is the last
// stable offset.
func TestTransactionMarkersReachTheReader(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "txn"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	txn, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("txn"), kgo.TransactionalID("source-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	ctx := context.Background()
	var want []string // what the reader must return, in order
	for _, commit := range []bool{true, false, true} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		recs := []*kgo.Record{{Value: []byte("a")}, {Value: []byte("b")}}
		if err := txn.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		if commit {
			want = append(want, fmt.Sprintf("%d", recs[0].Offset), fmt.Sprintf("%d", recs[1].Offset))
		}
		want = append(want, fmt.Sprintf("%d marker", recs[1].Offset+1))
	}
	k, err := NewKafkaClient(config.Kafka{BootstrapServers: kc.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	r := k.NewReader(ledger.TopicPartition{Topic: "txn"}, 0, 1<<20, nil)
	defer r.Close()
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var got []string
	var m Message
	for len(got) < len(want) {
		if m, err = r.Read(rctx); err != nil {
			t.Fatalf("reading after %v: %v", got, err)
		}
		s := fmt.Sprint(m.Offset)
		if m.Control {
			s += " marker"
		}
		got = append(got, s)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	if end := int64(9); m.HighWatermark != end {
		t.Fatalf("high watermark %d, want the last stable offset %d", m.HighWatermark, end)
	}
}

// The node's queue bound holds the records waiting for every reader
// together, however large each reader's own share: with readers that are
// never read, the lane stops polling once the node's queues hold the
// limit; then every record is read, in order, and the bound counts nothing
// left queued.
func TestQueueLimitBoundsAllReaders(t *testing.T) {
	const n, size, share, limit = 1000, 1 << 10, 4 << 20, 32 << 10
	k := testCluster(t, n, size)
	k.SetQueueLimit(limit)
	var rs []PartitionReader
	for p := range int32(2) {
		r := k.NewReader(ledger.TopicPartition{Topic: "t", Partition: p}, 0, share, nil)
		defer r.Close()
		rs = append(rs, r)
	}
	l := rs[0].(*sharedReader).reg.lane
	wait.For(t, 10*time.Second, "the lane waiting for room", l.waitingRoom.Load)
	// A fetch is at most the limit (past it by a batch, 8 KiB here), and
	// the one that crossed the limit is queued whole.
	if q := k.readers.bound.Queued(); q > 3*limit {
		t.Fatalf("readers queue %d bytes in all, want at most %d (limit %d)", q, 3*limit, limit)
	}
	for _, r := range rs {
		checkRun(t, readOffsets(t, r, n-1), 0)
	}
	if q := k.readers.bound.Queued(); q != 0 {
		t.Fatalf("%d bytes still counted as queued after every record was read", q)
	}
}
