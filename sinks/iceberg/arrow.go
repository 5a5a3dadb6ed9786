package iceberg

import (
	"fmt"
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/records"
)

// batchRows bounds the rows of one Arrow batch, so building a large flush
// does not hold every column of it in memory twice.
const batchRows = 65536

// buildBatch builds the Arrow batch of recs (at most batchRows) in the
// table's schema (fields, as arrow schema as); js is the caller's own
// JSON appender. dlq selects the dead-letter columns.
func buildBatch(fields []iceberg.NestedField, as *arrow.Schema, recs []*records.Record, dlq bool, js *jsonRows) (arrow.RecordBatch, error) {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer rb.Release()
	rb.Reserve(len(recs))
	for _, r := range recs {
		asJSON := r.JSON != nil && !dlq
		var err error
		for i, f := range fields {
			if asJSON && !metadataColumn(f.Name) {
				continue // appended from the JSON below
			}
			if err = appendColumn(rb.Field(i), f, r, dlq); err != nil {
				break
			}
		}
		if err == nil && asJSON {
			err = js.appendRow(rb, r.JSON)
		}
		if err != nil {
			return nil, fmt.Errorf("building row %s/%d@%d: %w", r.Topic, r.Partition, r.Offset, err)
		}
	}
	return rb.NewRecordBatch(), nil
}

func appendColumn(b array.Builder, f iceberg.NestedField, r *records.Record, dlq bool) error {
	switch f.Name {
	case ColTopic:
		b.(*array.StringBuilder).Append(r.Topic)
	case ColPartition:
		b.(*array.Int32Builder).Append(r.Partition)
	case ColOffset:
		b.(*array.Int64Builder).Append(r.Offset)
	case ColTimestamp:
		if r.Timestamp.IsZero() {
			b.AppendNull()
		} else {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(r.Timestamp.UnixMicro()))
		}
	case ColKey:
		if r.Key == nil {
			b.AppendNull()
		} else {
			b.(*array.BinaryBuilder).Append(r.Key)
		}
	case ColHeaders:
		lb := b.(*array.ListBuilder)
		if len(r.Headers) == 0 {
			lb.AppendNull()
			return nil
		}
		lb.Append(true)
		sb := lb.ValueBuilder().(*array.StructBuilder)
		for _, h := range r.Headers {
			sb.Append(true)
			sb.FieldBuilder(0).(*array.StringBuilder).Append(h.Key)
			if h.Value == nil {
				sb.FieldBuilder(1).AppendNull()
			} else {
				sb.FieldBuilder(1).(*array.BinaryBuilder).Append(h.Value)
			}
		}
	default:
		if r.Value == nil || dlq {
			switch {
			case f.Name == ColValue && (dlq || r.Value == nil) && r.Raw != nil:
				b.(*array.BinaryBuilder).Append(r.Raw)
			case f.Name == ColError && dlq:
				b.(*array.StringBuilder).Append(r.Err)
			default:
				b.AppendNull()
			}
			return nil
		}
		if err := appendValue(b, f.Type, r.Value[f.Name]); err != nil {
			return fmt.Errorf("column %s%w", f.Name, err)
		}
	}
	return nil
}

// appendValue appends one decoded value to a builder of type t. Values
// decoded before a column was promoted (int32 into long, float32 into
// double) are widened here.
// Errors start with the rest of the column path (".field", "[]") so the
// caller can prefix the column name without building paths on the hot path.
func appendValue(b array.Builder, t iceberg.Type, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch t := t.(type) {
	case iceberg.BooleanType:
		x, ok := v.(bool)
		if !ok {
			return typeErr(t, v)
		}
		b.(*array.BooleanBuilder).Append(x)
	case iceberg.Int64Type, iceberg.Int32Type, iceberg.Float64Type, iceberg.Float32Type:
		return appendNumber(b, t, v)
	case iceberg.StringType:
		x, ok := v.(string)
		if !ok {
			return typeErr(t, v)
		}
		b.(*array.StringBuilder).Append(x)
	case iceberg.TimestampTzType, iceberg.TimestampType:
		x, ok := v.(time.Time)
		if !ok {
			return typeErr(t, v)
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(x.UnixMicro()))
	case *iceberg.ListType:
		return appendList(b, t, v)
	case *iceberg.StructType:
		return appendStruct(b, t, v)
	default:
		return appendSchemaValue(b, t, v)
	}
	return nil
}

// appendNumber appends an integer or floating-point value, widening one
// decoded before its column was promoted.
func appendNumber(b array.Builder, t iceberg.Type, v any) error {
	switch t.(type) {
	case iceberg.Int64Type:
		switch x := v.(type) {
		case int64:
			b.(*array.Int64Builder).Append(x)
		case int32:
			b.(*array.Int64Builder).Append(int64(x))
		default:
			return typeErr(t, v)
		}
	case iceberg.Int32Type:
		switch x := v.(type) {
		case int32:
			b.(*array.Int32Builder).Append(x)
		case int64:
			if int64(int32(x)) != x {
				return typeErr(t, v)
			}
			b.(*array.Int32Builder).Append(int32(x))
		default:
			return typeErr(t, v)
		}
	case iceberg.Float64Type:
		switch x := v.(type) {
		case float64:
			b.(*array.Float64Builder).Append(x)
		case float32:
			b.(*array.Float64Builder).Append(float64(x))
		case int64: // decoded before the column widened from long
			b.(*array.Float64Builder).Append(float64(x))
		default:
			return typeErr(t, v)
		}
	case iceberg.Float32Type:
		switch x := v.(type) {
		case float32:
			b.(*array.Float32Builder).Append(x)
		case float64:
			b.(*array.Float32Builder).Append(float32(x))
		case int64:
			b.(*array.Float32Builder).Append(float32(x))
		default:
			return typeErr(t, v)
		}
	default:
		return typeErr(t, v)
	}
	return nil
}

func appendList(b array.Builder, t *iceberg.ListType, v any) error {
	xs, ok := v.([]any)
	if !ok {
		return typeErr(t, v)
	}
	lb := b.(*array.ListBuilder)
	lb.Append(true)
	for _, e := range xs {
		if err := appendValue(lb.ValueBuilder(), t.Element, e); err != nil {
			return fmt.Errorf("[]%w", err)
		}
	}
	return nil
}

func appendStruct(b array.Builder, t *iceberg.StructType, v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return typeErr(t, v)
	}
	sb := b.(*array.StructBuilder)
	sb.Append(true)
	for i, f := range t.FieldList {
		if err := appendValue(sb.FieldBuilder(i), f.Type, m[f.Name]); err != nil {
			return fmt.Errorf(".%s%w", f.Name, err)
		}
	}
	return nil
}

// appendSchemaValue appends values of the types only registry schemas
// produce (see records.Kind for their Go types).
func appendSchemaValue(b array.Builder, t iceberg.Type, v any) error {
	switch t := t.(type) {
	case iceberg.BinaryType:
		x, ok := v.([]byte)
		if !ok {
			return typeErr(t, v)
		}
		b.(*array.BinaryBuilder).Append(x)
	case iceberg.FixedType:
		x, ok := v.([]byte)
		if !ok || len(x) != t.Len() {
			return typeErr(t, v)
		}
		b.(*array.FixedSizeBinaryBuilder).Append(x)
	case iceberg.DecimalType:
		x, ok := v.(*big.Int)
		if !ok {
			return typeErr(t, v)
		}
		if x.BitLen() > 127 {
			return fmt.Errorf(": value %s does not fit %s", x, t)
		}
		b.(*array.Decimal128Builder).Append(decimal128.FromBigInt(x))
	case iceberg.DateType:
		x, ok := v.(records.Days)
		if !ok {
			return typeErr(t, v)
		}
		b.(*array.Date32Builder).Append(arrow.Date32(x))
	case iceberg.TimeType:
		x, ok := v.(time.Duration)
		if !ok {
			return typeErr(t, v)
		}
		b.(*array.Time64Builder).Append(arrow.Time64(x.Microseconds()))
	case iceberg.UUIDType:
		x, ok := v.([16]byte)
		if !ok {
			return typeErr(t, v)
		}
		b.(*extensions.UUIDBuilder).AppendBytes(x)
	case *iceberg.MapType:
		xs, ok := v.([]records.MapEntry)
		if !ok {
			return typeErr(t, v)
		}
		mb := b.(*array.MapBuilder)
		mb.Append(true)
		for _, e := range xs {
			if e.Key == nil {
				return fmt.Errorf(".key: map keys cannot be null")
			}
			if err := appendValue(mb.KeyBuilder(), t.KeyType, e.Key); err != nil {
				return fmt.Errorf(".key%w", err)
			}
			if err := appendValue(mb.ItemBuilder(), t.ValueType, e.Value); err != nil {
				return fmt.Errorf(".value%w", err)
			}
		}
	default:
		return fmt.Errorf(": type %s is not supported", t)
	}
	return nil
}

func typeErr(t iceberg.Type, v any) error {
	return fmt.Errorf(" is %s, value is %T", t, v)
}
