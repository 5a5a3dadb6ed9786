package schemas

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// The same order record as worker's BenchmarkDecodeJSON, in each registry
// format: decode rates to compare (go test -bench . ./worker/schemas ./worker/ingest).

func benchDecode(b *testing.B, format string, id int, fake *registrytest.Registry, payload []byte) {
	dec := NewDecoder(NewRegistry(RegistryConfig{URL: fake.URL}))
	ctx := context.Background()
	if _, err := dec.Value(ctx, format, "", payload); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dec.Value(ctx, format, "", payload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeAvro(b *testing.B) {
	fake := registrytest.New()
	defer fake.Close()
	id := fake.Register("o-value", "AVRO", registrytest.OrderAvro)
	p, err := registrytest.Avro(registrytest.OrderAvro, registrytest.OrderAvroValue(1))
	if err != nil {
		b.Fatal(err)
	}
	benchDecode(b, "avro", id, fake, registrytest.Frame(id, nil, p))
}

func BenchmarkDecodeProtobuf(b *testing.B) {
	fake := registrytest.New()
	defer fake.Close()
	id := fake.Register("o-value", "PROTOBUF", registrytest.OrderProto)
	md, err := registrytest.Proto(registrytest.OrderProto, "bench.Order")
	if err != nil {
		b.Fatal(err)
	}
	p, err := registrytest.ProtoFromJSON(md, registrytest.OrderProtoJSON(1))
	if err != nil {
		b.Fatal(err)
	}
	benchDecode(b, "protobuf", id, fake, registrytest.Frame(id, []int{0}, p))
}

func BenchmarkDecodeJSONSchema(b *testing.B) {
	fake := registrytest.New()
	defer fake.Close()
	sc := `{"type":"object","properties":{"order_id":{"type":"integer"},"customer_id":{"type":"string"},"status":{"type":"string"},
	"amount":{"type":"number"},"currency":{"type":"string"},"items":{"type":"array","items":{"type":"object","properties":{
	"sku":{"type":"string"},"qty":{"type":"integer"},"price":{"type":"number"}}}},"shipping":{"type":"object","properties":{
	"name":{"type":"string"},"street":{"type":"string"},"city":{"type":"string"},"zip":{"type":"string"},"country":{"type":"string"},
	"express":{"type":"boolean"}}},"created_at":{"type":"string","format":"date-time"},"note":{"type":"string"}}}`
	id := fake.Register("o-value", "JSON", sc)
	v := fmt.Sprintf(`{"order_id":%d,"customer_id":"cust-%08d","status":"paid","amount":12.34,"currency":"EUR","items":[{"sku":"sku-000001","qty":2,"price":9.99},{"sku":"sku-000002","qty":1,"price":3.49}],"shipping":{"name":"Customer 1","street":"1 Long Street Name","city":"Berlin","zip":"10115","country":"DE","express":true},"created_at":"2026-11-29T12:00:00.000Z","note":"%s"}`, 1, 1, strings.Repeat("x", 70))
	benchDecode(b, "json_schema", id, fake, registrytest.Frame(id, nil, []byte(v)))
}
