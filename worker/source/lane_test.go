package source

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/ledger"
)

func kRecords(from, to int64) []*kgo.Record {
	var rs []*kgo.Record
	for off := from; off < to; off++ {
		rs = append(rs, &kgo.Record{Offset: off, Value: []byte("v")})
	}
	return rs
}

// dispatch routes a poll's records and errors to the registration of their
// partition only, drops what no registration holds, and never hands a
// registration an offset below its next one.
func TestDispatchRoutesPerPartition(t *testing.T) {
	tp := func(topic string, p int32) ledger.TopicPartition {
		return ledger.TopicPartition{Topic: topic, Partition: p}
	}
	for _, tc := range []struct {
		name  string
		next  map[ledger.TopicPartition]int64 // registrations and their next offsets
		fetch []kgo.FetchTopic
		want  map[ledger.TopicPartition]string // what each registration reads, then its onError calls
	}{
		{
			name:  "nothing below the start",
			next:  map[ledger.TopicPartition]int64{tp("t", 0): 150},
			fetch: []kgo.FetchTopic{{Topic: "t", Partitions: []kgo.FetchPartition{{Partition: 0, Records: kRecords(140, 153)}}}},
			want:  map[ledger.TopicPartition]string{tp("t", 0): "[150 151 152] []"},
		},
		{
			name: "nothing twice, nothing backwards",
			next: map[ledger.TopicPartition]int64{tp("t", 0): 0},
			fetch: []kgo.FetchTopic{
				{Topic: "t", Partitions: []kgo.FetchPartition{{Partition: 0, Records: kRecords(0, 3)}}},
				{Topic: "t", Partitions: []kgo.FetchPartition{{Partition: 0, Records: kRecords(1, 5)}}},
			},
			want: map[ledger.TopicPartition]string{tp("t", 0): "[0 1 2 3 4] []"},
		},
		{
			name: "a partition's error reaches its reader only",
			next: map[ledger.TopicPartition]int64{tp("t", 0): 0, tp("t", 1): 0},
			fetch: []kgo.FetchTopic{{Topic: "t", Partitions: []kgo.FetchPartition{
				{Partition: 0, Records: kRecords(0, 2)},
				{Partition: 1, Err: kerr.TopicAuthorizationFailed},
			}}},
			want: map[ledger.TopicPartition]string{
				tp("t", 0): "[0 1] []",
				tp("t", 1): "[error] [fetching t/1: TOPIC_AUTHORIZATION_FAILED: Not authorized to access topics: [Topic authorization failed.]]",
			},
		},
		{
			name: "a removed partition's leftovers are dropped",
			next: map[ledger.TopicPartition]int64{tp("t", 0): 0},
			fetch: []kgo.FetchTopic{{Topic: "t", Partitions: []kgo.FetchPartition{
				{Partition: 1, Records: kRecords(0, 2)},
				{Partition: 1, Err: kerr.UnknownTopicOrPartition},
			}}},
			want: map[ledger.TopicPartition]string{tp("t", 0): "[] []"},
		},
		{
			name:  "a topic's error reaches that topic's readers",
			next:  map[ledger.TopicPartition]int64{tp("t", 0): 0, tp("u", 0): 0},
			fetch: []kgo.FetchTopic{{Topic: "t", Partitions: []kgo.FetchPartition{{Partition: -1, Err: kerr.UnknownTopicID}}}},
			want: map[ledger.TopicPartition]string{
				tp("t", 0): "[] [fetching t: UNKNOWN_TOPIC_ID: This server does not host this topic ID.]",
				tp("u", 0): "[] []",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &lane{regs: map[ledger.TopicPartition]*registration{}}
			errs := map[ledger.TopicPartition][]string{}
			for p, next := range tc.next {
				r := newRegistration(p, next, 1<<20, func(err error) { errs[p] = append(errs[p], err.Error()) })
				r.lane = l
				l.regs[p] = r
			}
			for _, ft := range tc.fetch {
				l.dispatch(kgo.Fetches{{Topics: []kgo.FetchTopic{ft}}})
			}
			for p, want := range tc.want {
				r := l.regs[p]
				r.mu.Lock()
				its := r.items[r.head:]
				r.mu.Unlock()
				got := []string{}
				for range its {
					m, err := (&sharedReader{reg: r}).Read(context.Background())
					if err != nil {
						got = append(got, "error")
						continue
					}
					got = append(got, fmt.Sprint(m.Offset))
				}
				if s := fmt.Sprintf("%v %v", got, fmt.Sprint(errs[p])); s != want {
					t.Errorf("%s reads %s, want %s", p, s, want)
				}
			}
		})
	}
}

// A queue that is read while it is filled, never empty, keeps only about
// its unread items: the read prefix is dropped.
func TestQueueNeverEmptyStaysBounded(t *testing.T) {
	r := newRegistration(ledger.TopicPartition{Topic: "t"}, 0, 1<<30, nil)
	r.lane = &lane{}
	off := int64(0)
	push := func(n int) {
		var its []item
		for range n {
			its = append(its, item{msg: Message{Offset: off}})
			off++
		}
		r.push(its)
	}
	push(10)
	for i := range 10 * compactAt {
		push(1)
		it, err := r.take(context.Background())
		if err != nil || it.msg.Offset != int64(i) {
			t.Fatalf("take %d: offset %v, %v", i, it.msg.Offset, err)
		}
	}
	if n := len(r.items); n > 2*compactAt+10 {
		t.Fatalf("queue holds %d items for 10 unread", n)
	}
}

// TestLaneFetchIsAFractionOfTheQueueBound: a lane's fetch sizes (counted
// compressed, queued whole, decompressed several times larger, with the
// next one fetched behind it) are at most 1/32 of the node's queue bound,
// and otherwise the sum and the largest of its readers' shares.
func TestLaneFetchIsAFractionOfTheQueueBound(t *testing.T) {
	for _, tc := range []struct {
		name            string
		bound           int64
		shares          []int32
		wantMax, wantPt int32
	}{
		{"1/32 of the bound", 128 << 20, []int32{16 << 20, 16 << 20, 16 << 20}, 4 << 20, 4 << 20},
		{"a small budget", 8 << 20, []int32{1 << 20, 1 << 20}, 256 << 10, 256 << 10},
		{"the readers' sum below it", 128 << 20, []int32{1 << 20, 2 << 20}, 3 << 20, 2 << 20},
		{"no bound: at most maxLaneFetch", 0, []int32{16 << 20, 16 << 20, 16 << 20, 16 << 20, 16 << 20}, maxLaneFetch, 16 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &queueBound{}
			b.setLimit(tc.bound)
			l, err := startLane([]kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}, b, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer l.stop()
			l.mu.Lock()
			for i, s := range tc.shares {
				l.regs[ledger.TopicPartition{Topic: "t", Partition: int32(i)}] = &registration{fetchBytes: s}
			}
			l.resize()
			l.mu.Unlock()
			if got := l.cl.OptValue(kgo.FetchMaxBytes); got != tc.wantMax {
				t.Errorf("FetchMaxBytes %v, want %d", got, tc.wantMax)
			}
			if got := l.cl.OptValue(kgo.FetchMaxPartitionBytes); got != tc.wantPt {
				t.Errorf("FetchMaxPartitionBytes %v, want %d", got, tc.wantPt)
			}
		})
	}
}
