package schemas

import (
	"context"
	"runtime"
	"testing"

	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// BenchmarkDecodedHeap reports the live heap of the benchmark's order
// decoded from each registry format (heap-B/rec) and per byte of its
// encoded value (heap-per-byte): what worker/ingest's RecordCost charges a
// registry-format record for.
//
//	go test -run '^$' -bench DecodedHeap -benchtime 1x ./worker/schemas/
func BenchmarkDecodedHeap(b *testing.B) {
	fake := registrytest.New()
	defer fake.Close()
	avroID := fake.Register("a-value", "AVRO", registrytest.OrderAvro)
	protoID := fake.Register("p-value", "PROTOBUF", registrytest.OrderProto)
	md, err := registrytest.Proto(registrytest.OrderProto, "bench.Order")
	if err != nil {
		b.Fatal(err)
	}
	encode := map[string]func(i int) ([]byte, error){
		"avro": func(i int) ([]byte, error) {
			p, err := registrytest.Avro(registrytest.OrderAvro, registrytest.OrderAvroValue(i))
			return registrytest.Frame(avroID, nil, p), err
		},
		"protobuf": func(i int) ([]byte, error) {
			p, err := registrytest.ProtoFromJSON(md, registrytest.OrderProtoJSON(i))
			return registrytest.Frame(protoID, []int{0}, p), err
		},
	}
	const n = 50_000
	for _, format := range []string{"avro", "protobuf"} {
		b.Run(format, func(b *testing.B) {
			dec := NewDecoder(NewRegistry(RegistryConfig{URL: fake.URL}))
			payloads := make([][]byte, n)
			size := 0
			for i := range payloads {
				if payloads[i], err = encode[format](i); err != nil {
					b.Fatal(err)
				}
				size += len(payloads[i])
			}
			for b.Loop() {
				before := liveHeapNow()
				out := make([]records.Decoded, n)
				for i, p := range payloads {
					if out[i], err = dec.Value(context.Background(), format, "", p); err != nil {
						b.Fatal(err)
					}
				}
				after := liveHeapNow()
				runtime.KeepAlive(out)
				per := float64(after-before) / n
				b.ReportMetric(per, "heap-B/rec")
				b.ReportMetric(per/(float64(size)/n), "heap-per-byte")
			}
		})
	}
}

func liveHeapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
