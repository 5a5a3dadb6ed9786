package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
)

// TestReadCommitted: a transactional producer's committed and aborted
// batches, interleaved with plain records, on two partitions. The table
// holds every committed record once and no aborted one, no control record
// is dead-lettered, and the committed offsets reach the high watermark:
// the ledger accepted ranges that cover the markers and aborted batches.
func TestReadCommitted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	brokers, plain, topic := txnKafka(t)
	txn, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID("floe-read-committed-"+topic))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	committed, aborted, hwm := produceTransactions(t, plain, txn, topic)

	// The verifier learns the committed records from Kafka itself.
	if got := readCommitted(t, brokers, topic, hwm); fmt.Sprint(got) != fmt.Sprint(committed) {
		t.Fatalf("read committed from Kafka: %v, produced committed: %v", got, committed)
	}

	cfg := testnode.Config(t, t.TempDir(), brokers, []config.Table{{Topic: topic, Namespace: "txn", Name: "events"}})
	ctx := context.Background()
	n, err := testnode.Start(ctx, cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()

	waitReport(t, n, "committed offsets at the high watermark", func(r status.Report) bool {
		// Start 0: the ledger knows the partition (the report shows an
		// unknown one at its fetched offset).
		tr, _ := tableReport(r, "txn.events")
		reached := 0
		for _, p := range tr.Partitions {
			if p.Start == 0 && p.Committed == hwm[p.Partition] && p.Lag == 0 {
				reached++
			}
		}
		return reached == len(hwm)
	})
	tbl, err := n.Catalog().LoadTable(ctx, []string{"txn", "events"})
	if err != nil {
		t.Fatal(err)
	}
	tbls := []*table.Table{tbl}
	// The dead-letter table exists only once something was dead-lettered:
	// a commit or abort marker read as a record is not valid JSON.
	if dlq, err := n.Catalog().LoadTable(ctx, []string{"txn", "events_dlq"}); err == nil {
		tbls = append(tbls, dlq)
	} else if !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatal(err)
	}
	checkOffsetsOnce(t, tbls, topic, committed, aborted)
	offs, err := icebergsink.Offsets(tbl.CurrentSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	for p, end := range hwm {
		if got := offs[fmt.Sprintf("%s/%d", topic, p)]; got != end {
			t.Fatalf("floe.offsets %s/%d = %d, want the high watermark %d", topic, p, got, end)
		}
	}
}

// txnKafka is the broker of TestReadCommitted: in-process kfake, or the
// real Kafka broker at FLOE_S11_KAFKA (interop scenario 11), where the test
// makes a topic of its own. It returns the brokers, a plain producer and the
// topic, of two partitions.
func txnKafka(t *testing.T) (brokers []string, plain *kgo.Client, topic string) {
	t.Helper()
	addr := os.Getenv("FLOE_S11_KAFKA")
	if addr == "" {
		kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "txn")})
		return kc.ListenAddrs(), cl, "txn"
	}
	topic = fmt.Sprintf("txn-%d", time.Now().UnixNano())
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 2, 1
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatalf("creating topic %s on %s: %v", topic, addr, err)
	}
	for _, r := range resp.Topics {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			t.Fatalf("creating topic %s on %s: %v", topic, addr, err)
		}
	}
	t.Logf("real Kafka at %s, topic %s", addr, topic)
	return []string{addr}, cl, topic
}

// produceTransactions writes, on each of two partitions, committed and
// aborted transactions of three records and plain records, interleaved;
// each partition starts with an aborted batch and ends with a committed
// one's marker, then an aborted batch and its marker. It returns the offsets of the committed
// data records (transactional or plain) and of the aborted ones per
// partition, in order, and each partition's high watermark.
func produceTransactions(t *testing.T, plain, txn *kgo.Client, topic string) (committed, aborted map[int32][]int64, hwm map[int32]int64) {
	t.Helper()
	ctx := context.Background()
	committed, aborted = map[int32][]int64{}, map[int32][]int64{}
	i := 0
	record := func(p int32, kind string) *kgo.Record {
		i++
		return &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf(`{"i":%d,"kind":%q}`, i, kind))}
	}
	plainRound := func() {
		for p := range int32(2) {
			r, err := plain.ProduceSync(ctx, record(p, "plain")).First()
			if err != nil {
				t.Fatal(err)
			}
			committed[p] = append(committed[p], r.Offset)
		}
	}
	// A: an aborted transaction, C: a committed one, P: a plain record.
	for _, step := range "ACPCCAPCACPPCA" {
		if step == 'P' {
			plainRound()
			continue
		}
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for range 3 {
			recs = append(recs, record(0, "txn"), record(1, "txn"))
		}
		if err := txn.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(step == 'C')); err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if step == 'C' {
				committed[r.Partition] = append(committed[r.Partition], r.Offset)
			} else {
				aborted[r.Partition] = append(aborted[r.Partition], r.Offset)
			}
		}
	}
	return committed, aborted, highWatermarks(t, plain, topic, 2)
}

// highWatermarks lists the ends of a topic's partitions once no
// transaction is open on them. EndTransaction returns when the coordinator
// has logged the outcome; it writes the commit or abort markers to the
// partitions afterwards, so a high watermark read at once may stop short of
// the last marker. Until the marker lands, the last stable offset (what a
// read-committed ListOffsets returns) stays at the open transaction's first
// offset, below the high watermark: the ends are final when the two agree.
func highWatermarks(t *testing.T, cl *kgo.Client, topic string, partitions int32) map[int32]int64 {
	t.Helper()
	var hwm map[int32]int64
	wait.For(t, 30*time.Second, "the last transaction markers on "+topic, func() bool {
		hwm = listOffsets(t, cl, topic, partitions, 0)
		return fmt.Sprint(hwm) == fmt.Sprint(listOffsets(t, cl, topic, partitions, 1))
	})
	return hwm
}

// listOffsets lists the ends of a topic's partitions at an isolation
// level: 0 the high watermarks, 1 the last stable offsets.
func listOffsets(t *testing.T, cl *kgo.Client, topic string, partitions int32, isolation int8) map[int32]int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range partitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				t.Fatalf("listing %s/%d: %v", topic, rp.Partition, err)
			}
			out[rp.Partition] = rp.Offset
		}
	}
	return out
}

// readCommitted reads the topic read committed with franz-go until every
// partition's reader has passed its last offset before hwm (the high
// watermark: a marker's offset is never returned, but the reader's fetch
// position moves past it) and returns the offsets of its records per
// partition, in order.
func readCommitted(t *testing.T, brokers []string, topic string, hwm map[int32]int64) map[int32][]int64 {
	t.Helper()
	starts := map[int32]kgo.Offset{}
	for p := range hwm {
		starts[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: starts}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, pos := map[int32][]int64{}, map[int32]int64{}
	done := func() bool {
		for p, end := range hwm {
			if pos[p] < end {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading %s read committed: %v (at %v of %v)", topic, err, pos, hwm)
		}
		fs.EachRecord(func(r *kgo.Record) {
			pos[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() {
				out[r.Partition] = append(out[r.Partition], r.Offset)
			}
		})
	}
	return out
}

// checkOffsetsOnce is checkExactlyOnce for partitions with gaps: across
// the tables, every offset in want appears exactly once, no offset in
// never appears, and nothing else does.
func checkOffsetsOnce(t *testing.T, tbls []*table.Table, topic string, want, never map[int32][]int64) {
	t.Helper()
	all := testnode.OffsetCountsAcross(t, tbls)
	for p, offs := range want {
		got := all[fmt.Sprintf("%s/%d", topic, p)]
		for _, o := range never[p] {
			if got[o] != 0 {
				t.Fatalf("%s/%d offset %d of an aborted transaction appears %d times", topic, p, o, got[o])
			}
		}
		for _, o := range offs {
			if got[o] != 1 {
				t.Fatalf("%s/%d committed offset %d appears %d times", topic, p, o, got[o])
			}
		}
		if len(got) != len(offs) {
			t.Fatalf("%s/%d: %d distinct offsets in the tables, want the %d committed ones", topic, p, len(got), len(offs))
		}
	}
}
