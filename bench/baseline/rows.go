package main

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// order is the benchmark's record (cmd/floe's benchRecord): ids, strings,
// numbers, a nested object and a list of objects, about 490 bytes as JSON.
type order struct {
	OrderID    int64    `json:"order_id"`
	CustomerID string   `json:"customer_id"`
	Status     string   `json:"status"`
	Amount     float64  `json:"amount"`
	Currency   string   `json:"currency"`
	Items      []item   `json:"items"`
	Shipping   shipping `json:"shipping"`
	CreatedAt  string   `json:"created_at"`
	Note       string   `json:"note"`
}

type item struct {
	SKU   string  `json:"sku"`
	Qty   int64   `json:"qty"`
	Price float64 `json:"price"`
}

type shipping struct {
	Name    string `json:"name"`
	Street  string `json:"street"`
	City    string `json:"city"`
	Zip     string `json:"zip"`
	Country string `json:"country"`
	Express bool   `json:"express"`
}

// row is one decoded record with where it came from; the partition and
// offset columns let the benchmark check that every record landed once.
type row struct {
	o         order
	partition int32
	offset    int64
}

// tableSchema is the Iceberg schema of the table: the order's fields, then
// the Kafka partition and offset (named as Floe names them, so one checker
// reads both tables).
func tableSchema() *iceberg.Schema {
	str := iceberg.PrimitiveTypes.String
	opt := func(id int, name string, t iceberg.Type) iceberg.NestedField {
		return iceberg.NestedField{ID: id, Name: name, Type: t}
	}
	return iceberg.NewSchema(0,
		opt(1, "order_id", iceberg.PrimitiveTypes.Int64),
		opt(2, "customer_id", str),
		opt(3, "status", str),
		opt(4, "amount", iceberg.PrimitiveTypes.Float64),
		opt(5, "currency", str),
		opt(6, "items", &iceberg.ListType{ElementID: 7, ElementRequired: false, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			opt(8, "sku", str), opt(9, "qty", iceberg.PrimitiveTypes.Int64), opt(10, "price", iceberg.PrimitiveTypes.Float64),
		}}}),
		opt(11, "shipping", &iceberg.StructType{FieldList: []iceberg.NestedField{
			opt(12, "name", str), opt(13, "street", str), opt(14, "city", str), opt(15, "zip", str), opt(16, "country", str),
			opt(17, "express", iceberg.PrimitiveTypes.Bool),
		}}),
		opt(18, "created_at", str),
		opt(19, "note", str),
		opt(20, "_kafka_partition", iceberg.PrimitiveTypes.Int32),
		opt(21, "_kafka_offset", iceberg.PrimitiveTypes.Int64),
	)
}

// appendRow appends r to the record builder whose schema is tableSchema's
// Arrow form (field order as above).
func appendRow(b *array.RecordBuilder, r *row) {
	o := &r.o
	b.Field(0).(*array.Int64Builder).Append(o.OrderID)
	b.Field(1).(*array.StringBuilder).Append(o.CustomerID)
	b.Field(2).(*array.StringBuilder).Append(o.Status)
	b.Field(3).(*array.Float64Builder).Append(o.Amount)
	b.Field(4).(*array.StringBuilder).Append(o.Currency)
	items := b.Field(5).(*array.ListBuilder)
	items.Append(true)
	is := items.ValueBuilder().(*array.StructBuilder)
	for _, it := range o.Items {
		is.Append(true)
		is.FieldBuilder(0).(*array.StringBuilder).Append(it.SKU)
		is.FieldBuilder(1).(*array.Int64Builder).Append(it.Qty)
		is.FieldBuilder(2).(*array.Float64Builder).Append(it.Price)
	}
	sh := b.Field(6).(*array.StructBuilder)
	sh.Append(true)
	for i, s := range []string{o.Shipping.Name, o.Shipping.Street, o.Shipping.City, o.Shipping.Zip, o.Shipping.Country} {
		sh.FieldBuilder(i).(*array.StringBuilder).Append(s)
	}
	sh.FieldBuilder(5).(*array.BooleanBuilder).Append(o.Shipping.Express)
	b.Field(7).(*array.StringBuilder).Append(o.CreatedAt)
	b.Field(8).(*array.StringBuilder).Append(o.Note)
	b.Field(9).(*array.Int32Builder).Append(r.partition)
	b.Field(10).(*array.Int64Builder).Append(r.offset)
}

// arrowSchema is the table schema as Arrow sees it.
func arrowSchema(sc *iceberg.Schema) (*arrow.Schema, error) {
	return table.SchemaToArrowSchema(sc, nil, false, false)
}
