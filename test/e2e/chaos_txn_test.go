//go:build long

package e2e

// The chaos test's transactional load: on one more topic, a transactional
// producer's committed and aborted batches interleaved with plain records
// in the same partitions, and the final check that its table holds every
// committed offset once and no aborted one.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/testing/wait"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
)

// txnSteps is the cycle of the transactional load: A an aborted
// transaction, C a committed one, P a round of plain records.
const txnSteps = "ACPCCAPCACPPCA"

// txnLoad writes to every partition of its topic, every 200 ms, one step of
// txnSteps: a transaction of two records per partition, committed or
// aborted, or one plain record per partition from the fleet's plain
// client. It keeps the offsets of committed data records (transactional or
// plain) and of aborted ones per partition.
type txnLoad struct {
	f      *fleet
	topic  string
	txn    *kgo.Client
	cancel context.CancelFunc
	done   chan error

	mu                 sync.Mutex
	committed, aborted map[int32][]int64
	counts             map[byte]int
}

// addTxnTopic creates the transactional load's topic (named like the
// fleet's others) and maps it for the nodes started afterwards.
func (f *fleet) addTxnTopic() string {
	topic := "txns" + strings.TrimPrefix(f.topics[0], "orders") // "_<run>" on a real broker
	f.createTopics(topic)
	f.txnTopics = append(f.txnTopics, topic)
	return topic
}

// startTxnLoad creates the transactional topic's client and starts writing;
// the topic must exist and be mapped (f.txnTopics).
func (f *fleet) startTxnLoad(topic string) *txnLoad {
	txn, err := kgo.NewClient(kgo.SeedBrokers(f.brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID("floe-chaos-"+topic))
	if err != nil {
		f.t.Fatal(err)
	}
	l := &txnLoad{f: f, topic: topic, txn: txn, done: make(chan error, 1),
		committed: map[int32][]int64{}, aborted: map[int32][]int64{}, counts: map[byte]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go func() {
		defer close(l.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ctx.Err() == nil; i++ {
			if err := l.round(txnSteps[i%len(txnSteps)]); err != nil {
				l.done <- err
				return
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	}()
	f.t.Cleanup(func() { l.cancel(); <-l.done; txn.Close() })
	return l
}

func (l *txnLoad) round(step byte) error {
	// Not cancelled with the load: a produce or an end cut short would
	// leave records of unknown fate.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var recs []*kgo.Record
	per := 2
	if step == 'P' {
		per = 1
	}
	for p := range int32(fleetPartitions) {
		for j := range per {
			k := fmt.Sprintf("%s-%c-%d-%d-%d", l.topic, step, p, time.Now().UnixNano(), j)
			recs = append(recs, &kgo.Record{Topic: l.topic, Partition: p, Key: []byte(k), Value: fmt.Appendf(nil, `{"k":%q,"kind":"%c"}`, k, step)})
		}
	}
	if step == 'P' {
		if err := l.f.client.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fmt.Errorf("producing plain records to %s: %w", l.topic, err)
		}
	} else {
		if err := l.txn.BeginTransaction(); err != nil {
			return fmt.Errorf("beginning a transaction: %w", err)
		}
		if err := l.txn.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fmt.Errorf("producing in a transaction to %s: %w", l.topic, err)
		}
		if err := l.txn.EndTransaction(ctx, kgo.TransactionEndTry(step == 'C')); err != nil {
			return fmt.Errorf("ending a transaction (%c): %w", step, err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[step]++
	for _, r := range recs {
		if step == 'A' {
			l.aborted[r.Partition] = append(l.aborted[r.Partition], r.Offset)
		} else {
			l.committed[r.Partition] = append(l.committed[r.Partition], r.Offset)
		}
	}
	return nil
}

// stop ends the load and returns each partition's high watermark once its
// last transaction's marker is written.
func (l *txnLoad) stop() map[int32]int64 {
	l.cancel()
	if err := <-l.done; err != nil {
		l.f.t.Fatal(err)
	}
	hwm := highWatermarks(l.f.t, l.f.client, l.topic, fleetPartitions) // txn_test.go
	l.mu.Lock()
	defer l.mu.Unlock()
	l.f.event("transactional load on %s stopped: %d committed, %d aborted transactions, %d plain rounds",
		l.topic, l.counts['C'], l.counts['A'], l.counts['P'])
	return hwm
}

// verifyTxn waits until the transactional table's committed offsets reach
// the high watermarks (the ledger accepted ranges covering the markers and
// aborted batches), then reads the table from its metadata location without
// Floe: every committed offset once, no aborted one, no dead letter (a
// marker read as a record would be one), and floe.offsets at the ends.
func (f *fleet) verifyTxn(l *txnLoad, hwm map[int32]int64, timeout time.Duration) {
	f.t.Helper()
	name := tableOf(l.topic)
	var loc string
	err := wait.Poll(timeout, func() error {
		rep, _, err := f.status()
		if err != nil {
			return err
		}
		tr, ok := tableReport(rep, name)
		if !ok {
			return fmt.Errorf("no table %s", name)
		}
		var behind []string
		got := map[int32]int64{}
		for _, p := range tr.Partitions {
			got[p.Partition] = p.Committed
		}
		for p, end := range hwm {
			if got[p] != end {
				behind = append(behind, fmt.Sprintf("%d=%d/%d", p, got[p], end))
			}
		}
		if len(behind) > 0 {
			return fmt.Errorf("%s behind: %s", name, strings.Join(behind, " "))
		}
		if tr.DeadLetterRows != 0 {
			return fmt.Errorf("%s: %d dead letters, want none", name, tr.DeadLetterRows)
		}
		loc = tr.MetadataLocation
		return nil
	})
	if err != nil {
		f.t.Fatalf("transactional table not caught up after %s: %v", timeout, err)
	}
	ctx := context.Background()
	tbl, err := table.NewFromLocation(ctx, table.Identifier{fleetNamespace, l.topic}, loc, icebergio.LoadFSFunc(node.IOProps(f.wh), loc), nil)
	if err != nil {
		f.t.Fatalf("loading %s from %s: %v", name, loc, err)
	}
	l.mu.Lock()
	committed, aborted := l.committed, l.aborted
	l.mu.Unlock()
	checkOffsetsOnce(f.t, []*table.Table{tbl}, l.topic, committed, aborted) // txn_test.go
	offs, err := icebergsink.Offsets(tbl.CurrentSnapshot())
	if err != nil {
		f.t.Fatal(err)
	}
	var n, a int
	for p, end := range hwm {
		if got := offs[fmt.Sprintf("%s/%d", l.topic, p)]; got != end {
			f.t.Errorf("%s: floe.offsets[%s/%d] = %d, want the high watermark %d", name, l.topic, p, got, end)
		}
		n, a = n+len(committed[p]), a+len(aborted[p])
	}
	f.event("read committed: %s holds its %d committed offsets once and none of %d aborted", name, n, a)
}
