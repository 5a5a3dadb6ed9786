package source

import (
	"bytes"
	"context"
	"testing"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A message keeps none of its fetch's bytes: the fetch's buffer is
// overwritten after message, and the message still reads what was fetched
// (the same bytes, nil staying nil).
func TestMessageCopiesOutOfTheFetch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		key, val []byte
		headers  []kgo.RecordHeader
	}{
		{name: "key, value and headers", key: []byte("k1"), val: []byte(`{"a":1}`),
			headers: []kgo.RecordHeader{{Key: "h", Value: []byte("hv")}, {Key: "n", Value: nil}}},
		{name: "no key", key: nil, val: []byte("v")},
		{name: "tombstone", key: []byte("k"), val: nil},
		{name: "empty value", key: []byte("k"), val: []byte{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One buffer for every byte, as a decompressed batch is.
			batch := append(append([]byte(nil), tc.key...), tc.val...)
			rec := &kgo.Record{Offset: 3}
			if tc.key != nil {
				rec.Key = batch[:len(tc.key)]
			}
			if tc.val != nil {
				rec.Value = batch[len(tc.key):]
			}
			for _, h := range tc.headers {
				var v []byte
				if h.Value != nil {
					batch = append(batch, h.Value...)
					v = batch[len(batch)-len(h.Value):]
				}
				rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h.Key, Value: v})
			}
			m := message(rec, 10)
			for i := range batch {
				batch[i] = 'X'
			}
			if !bytes.Equal(m.Key, tc.key) || (m.Key == nil) != (tc.key == nil) {
				t.Errorf("key %q, want %q", m.Key, tc.key)
			}
			if !bytes.Equal(m.Value, tc.val) || (m.Value == nil) != (tc.val == nil) {
				t.Errorf("value %q, want %q", m.Value, tc.val)
			}
			for i, h := range tc.headers {
				if m.Headers[i].Key != h.Key || !bytes.Equal(m.Headers[i].Value, h.Value) || (m.Headers[i].Value == nil) != (h.Value == nil) {
					t.Errorf("header %d %q=%q, want %q=%q", i, m.Headers[i].Key, m.Headers[i].Value, h.Key, h.Value)
				}
			}
			if m.Offset != 3 || m.HighWatermark != 10 {
				t.Errorf("offset %d, end %d", m.Offset, m.HighWatermark)
			}
		})
	}
}

// A record is copied out of its fetch when it is queued, not when it is
// read: a partition's queue keeps none of the fetch's buffer alive (the
// buffer is overwritten between the dispatch and the read).
func TestQueuedRecordKeepsNoFetchBuffer(t *testing.T) {
	tp := ledger.TopicPartition{Topic: "t"}
	l := &lane{regs: map[ledger.TopicPartition]*registration{}}
	r := newRegistration(tp, 0, 1<<20, nil)
	r.lane = l
	l.regs[tp] = r
	batch := []byte("k0v0k1v1")
	recs := []*kgo.Record{{Offset: 0, Key: batch[0:2], Value: batch[2:4]}, {Offset: 1, Key: batch[4:6], Value: batch[6:8]}}
	l.dispatch(kgo.Fetches{{Topics: []kgo.FetchTopic{{Topic: "t", Partitions: []kgo.FetchPartition{{Partition: 0, Records: recs}}}}}})
	copy(batch, "XXXXXXXX")
	for i, want := range []string{"k0v0", "k1v1"} {
		m, err := (&sharedReader{reg: r}).Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := string(m.Key) + string(m.Value); got != want {
			t.Errorf("record %d reads %q, want %q", i, got, want)
		}
	}
}
