package ingest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/worker/source"
)

// heapRecords are the record kinds the per-record overhead is measured on.
var heapRecords = []struct {
	name, format string
	value        string
}{
	{"small json", "json", `{"i":12345}`},
	{"order json", "json", fmt.Sprintf(`{"order_id":%d,"customer_id":"cust-%08d","status":"paid","amount":12.34,"currency":"EUR","items":[{"sku":"sku-000001","qty":2,"price":9.99},{"sku":"sku-000002","qty":1,"price":3.49}],"shipping":{"name":"Customer 1","street":"1 Long Street Name","city":"Berlin","zip":"10115","country":"DE","express":true},"created_at":"2026-11-29T12:00:00.000Z","note":"%s"}`, 1, 1, strings.Repeat("x", 70))},
	{"order json kept", "json kept", fmt.Sprintf(`{"order_id":%d,"customer_id":"cust-%08d","status":"paid","amount":12.34,"currency":"EUR","items":[{"sku":"sku-000001","qty":2,"price":9.99},{"sku":"sku-000002","qty":1,"price":3.49}],"shipping":{"name":"Customer 1","street":"1 Long Street Name","city":"Berlin","zip":"10115","country":"DE","express":true},"created_at":"2026-11-29T12:00:00.000Z","note":"%s"}`, 1, 1, strings.Repeat("x", 70))},
	{"raw 1KiB", "raw", strings.Repeat("r", 1024)},
}

// bufferLike builds n records as handle buffers them: a fetched message
// (its value a buffer of its own, as a fetch response's is), the record,
// its decoded value (or, "json kept", the value kept as fetched because it
// fits the columns), the buffer's pointer.
func bufferLike(tb testing.TB, n int, format, value string) []*records.Record {
	shape := &records.Shape{Kind: records.Struct}
	buf := make([]*records.Record, 0, n)
	for i := range n {
		m := source.Message{Offset: int64(i), Key: []byte(fmt.Sprintf("k%07d", i)), Value: []byte(value), Time: time.UnixMilli(int64(i))}
		rec := &records.Record{Topic: "orders", Partition: 3, Offset: m.Offset, Timestamp: m.Time, Key: m.Key}
		switch format {
		case "raw":
			rec.Raw = m.Value
		case "json kept":
			rec.JSON = m.Value
			rec.Mem = RecordCost("raw", m)
			buf = append(buf, rec)
			continue
		default:
			v, err := decodeJSON(shape, m.Value)
			if err != nil {
				tb.Fatal(err)
			}
			rec.Value = v
		}
		rec.Mem = RecordCost(format, m)
		buf = append(buf, rec)
	}
	return buf
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkRecordHeap reports the live heap a buffered record takes
// (heap-B/rec) and what is left after its key and value bytes
// (overhead-B/rec): the figure recordOverhead is set from.
//
//	go test -run '^$' -bench RecordHeap -benchtime 1x ./worker/ingest/
func BenchmarkRecordHeap(b *testing.B) {
	const n = 100_000
	for _, c := range heapRecords {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				before := liveHeap()
				buf := bufferLike(b, n, c.format, c.value)
				after := liveHeap()
				runtime.KeepAlive(buf)
				per := float64(after-before) / n
				b.ReportMetric(per, "heap-B/rec")
				b.ReportMetric(per-float64(len(c.value)+8), "overhead-B/rec")
				b.ReportMetric(float64(buf[0].Mem), "charged-B/rec")
			}
		})
	}
}
