package registrytest

import (
	"fmt"
	"strings"
	"time"
)

// The benchmark's order record (the same fields as floe bench's JSON
// record, about 500 bytes as JSON) in Avro and Protobuf.
const (
	OrderAvro = `{"type":"record","name":"Order","namespace":"bench","fields":[
 {"name":"order_id","type":"long"},{"name":"customer_id","type":"string"},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["new","paid","shipped","delivered"]}},
 {"name":"amount","type":"double"},{"name":"currency","type":"string"},
 {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
   {"name":"sku","type":"string"},{"name":"qty","type":"int"},{"name":"price","type":"double"}]}}},
 {"name":"shipping","type":{"type":"record","name":"Shipping","fields":[
   {"name":"name","type":"string"},{"name":"street","type":"string"},{"name":"city","type":"string"},
   {"name":"zip","type":"string"},{"name":"country","type":"string"},{"name":"express","type":"boolean"}]}},
 {"name":"created_at","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"note","type":["null","string"],"default":null}]}`

	OrderProto = `syntax = "proto3";
package bench;
import "google/protobuf/timestamp.proto";
message Order {
  int64 order_id = 1; string customer_id = 2; Status status = 3; double amount = 4; string currency = 5;
  repeated Item items = 6; Shipping shipping = 7; google.protobuf.Timestamp created_at = 8; optional string note = 9;
  enum Status { NEW = 0; PAID = 1; SHIPPED = 2; DELIVERED = 3; }
  message Item { string sku = 1; int32 qty = 2; double price = 3; }
  message Shipping { string name = 1; string street = 2; string city = 3; string zip = 4; string country = 5; bool express = 6; }
}`
)

// OrderAvroValue is record i for hamba/avro.
func OrderAvroValue(i int) map[string]any {
	return map[string]any{
		"order_id": int64(i), "customer_id": fmt.Sprintf("cust-%08d", i%100000),
		"status": []string{"new", "paid", "shipped", "delivered"}[i%4], "amount": float64(i%1000) + float64(i%100)/100,
		"currency": "EUR",
		"items": []any{
			map[string]any{"sku": fmt.Sprintf("sku-%06d", i%999999), "qty": int32(1 + i%5), "price": float64(i%200) + 0.99},
			map[string]any{"sku": fmt.Sprintf("sku-%06d", (i*7)%999999), "qty": int32(1 + i%3), "price": float64(i%50) + 0.49},
		},
		"shipping": map[string]any{"name": fmt.Sprintf("Customer %d", i), "street": fmt.Sprintf("%d Long Street Name", i%999),
			"city": "Berlin", "zip": fmt.Sprintf("%05d", i%99999), "country": "DE", "express": i%2 == 0},
		"created_at": time.Date(2026, 11, 29, 12, i%60, i%60, (i%1000)*1e6, time.UTC),
		"note":       strings.Repeat("x", 60+i%20),
	}
}

// OrderProtoJSON is record i in protojson form.
func OrderProtoJSON(i int) string {
	return fmt.Sprintf(`{"order_id":"%d","customer_id":"cust-%08d","status":"%s","amount":%d.%02d,"currency":"EUR",`+
		`"items":[{"sku":"sku-%06d","qty":%d,"price":%d.99},{"sku":"sku-%06d","qty":%d,"price":%d.49}],`+
		`"shipping":{"name":"Customer %d","street":"%d Long Street Name","city":"Berlin","zip":"%05d","country":"DE","express":%t},`+
		`"created_at":"2026-11-29T12:%02d:%02d.%03dZ","note":"%s"}`,
		i, i%100000, []string{"NEW", "PAID", "SHIPPED", "DELIVERED"}[i%4], i%1000, i%100, i%999999, 1+i%5, i%200, (i*7)%999999, 1+i%3, i%50,
		i, i%999, i%99999, i%2 == 0, i%60, i%60, i%1000, strings.Repeat("x", 60+i%20))
}
