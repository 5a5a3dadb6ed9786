package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/records"
)

func BenchmarkDecodeJSON(b *testing.B) {
	v := []byte(fmt.Sprintf(`{"order_id":%d,"customer_id":"cust-%08d","status":"paid","amount":12.34,"currency":"EUR","items":[{"sku":"sku-000001","qty":2,"price":9.99},{"sku":"sku-000002","qty":1,"price":3.49}],"shipping":{"name":"Customer 1","street":"1 Long Street Name","city":"Berlin","zip":"10115","country":"DE","express":true},"created_at":"2026-11-29T12:00:00.000Z","note":"%s"}`, 1, 1, strings.Repeat("x", 70)))
	shape := &records.Shape{Kind: records.Struct}
	if _, err := decodeJSON(shape, v); err != nil {
		b.Fatal(err)
	}
	shape.MarkCommitted()
	b.SetBytes(int64(len(v)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeJSON(shape, v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdlibDecodeOnly(b *testing.B) {
	v := []byte(fmt.Sprintf(`{"order_id":%d,"customer_id":"cust-%08d","status":"paid","amount":12.34,"currency":"EUR","items":[{"sku":"sku-000001","qty":2,"price":9.99},{"sku":"sku-000002","qty":1,"price":3.49}],"shipping":{"name":"Customer 1","street":"1 Long Street Name","city":"Berlin","zip":"10115","country":"DE","express":true},"created_at":"2026-11-29T12:00:00.000Z","note":"%s"}`, 1, 1, strings.Repeat("x", 70)))
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		var x any
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		if err := dec.Decode(&x); err != nil {
			b.Fatal(err)
		}
	}
}
