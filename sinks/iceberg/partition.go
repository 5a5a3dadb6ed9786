package iceberg

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/ledger"
)

// Partition values cross Raft in a ledger.FileDescriptor. A JSON number is
// a float64 to encoding/json, so a long above 2^53 lost its low bits, and
// decimal, uuid, binary, fixed and time values came back as whatever JSON
// made of them. They now travel in Iceberg's single-value binary
// serialization (the spec's Appendix D, as column bounds already do), keyed
// by partition field id, and are decoded with the partition field's result
// type when the data file is rebuilt.

// encodePartition serializes each partition value of a written data file.
// A null value stays a null (nil) entry. A value of a Go type iceberg-go
// has no literal for is left out: rebuild then falls back to the JSON value
// for it, as before.
func encodePartition(part map[int]any) map[int][]byte {
	if len(part) == 0 {
		return nil
	}
	out := make(map[int][]byte, len(part))
	for id, v := range part {
		if v == nil {
			out[id] = nil
			continue
		}
		lit, ok := literalOf(v)
		if !ok {
			continue
		}
		b, err := lit.MarshalBinary()
		if err != nil {
			continue
		}
		if b == nil {
			b = []byte{} // an empty string or binary is not a null
		}
		out[id] = b
	}
	return out
}

// literalOf wraps a partition value as iceberg-go's writers produce them
// (the Go types of Literal.Any) in its literal.
func literalOf(v any) (iceberg.Literal, bool) {
	switch x := v.(type) {
	case bool:
		return iceberg.NewLiteral(x), true
	case int32:
		return iceberg.NewLiteral(x), true
	case int64:
		return iceberg.NewLiteral(x), true
	case float32:
		return iceberg.NewLiteral(x), true
	case float64:
		return iceberg.NewLiteral(x), true
	case iceberg.Date:
		return iceberg.NewLiteral(x), true
	case iceberg.Time:
		return iceberg.NewLiteral(x), true
	case iceberg.Timestamp:
		return iceberg.NewLiteral(x), true
	case iceberg.TimestampNano:
		return iceberg.NewLiteral(x), true
	case string:
		return iceberg.NewLiteral(x), true
	case []byte:
		return iceberg.NewLiteral(x), true
	case uuid.UUID:
		return iceberg.NewLiteral(x), true
	case iceberg.Decimal:
		return iceberg.NewLiteral(x), true
	}
	return nil, false
}

// partitionValues rebuilds a descriptor's partition values with the Go
// types of the spec's result types: from the binary form when the entry
// carries it for the field (this version wrote it), else from the JSON
// value (an entry of an older node), whose numbers came back as float64.
func partitionValues(meta table.Metadata, spec iceberg.PartitionSpec, d ledger.FileDescriptor) (map[int]any, error) {
	if len(d.Partition) == 0 && len(d.PartValues) == 0 {
		return nil, nil
	}
	schema := meta.CurrentSchema()
	pt := spec.PartitionType(schema)
	byID := map[int]iceberg.PartitionField{}
	for _, pf := range spec.Fields() {
		byID[pf.FieldID] = pf
	}
	out := map[int]any{}
	for _, f := range pt.FieldList {
		if b, ok := d.PartValues[f.ID]; ok {
			if b == nil {
				out[f.ID] = nil
				continue
			}
			lit, err := iceberg.LiteralFromBytes(f.Type, b)
			if err != nil {
				return nil, fmt.Errorf("partition field %s (%s): %w", f.Name, f.Type, err)
			}
			out[f.ID] = lit.Any()
			continue
		}
		v, err := legacyPartition(schema, f, byID[f.ID], d)
		if err != nil {
			return nil, fmt.Errorf("partition field %s (%s): %w", f.Name, f.Type, err)
		}
		out[f.ID] = v
	}
	return out, nil
}

// legacyValue restores a partition value from its JSON form, as the
// release before the binary form did: exact for booleans, strings and
// integers up to 2^53, the rest as JSON gave it.
func legacyValue(typ iceberg.Type, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ.(type) {
	case iceberg.Int32Type, iceberg.DateType:
		n, err := number(v)
		if err != nil {
			return nil, err
		}
		if _, ok := typ.(iceberg.DateType); ok {
			return iceberg.Date(int32(n)), nil
		}
		return int32(n), nil
	case iceberg.Int64Type, iceberg.TimestampType, iceberg.TimestampTzType:
		n, err := number(v)
		if err != nil {
			return nil, err
		}
		if _, ok := typ.(iceberg.Int64Type); !ok {
			return iceberg.Timestamp(int64(n)), nil // the Go type the writer itself gives
		}
		return int64(n), nil
	case iceberg.StringType:
		return fmt.Sprint(v), nil
	}
	return v, nil
}

func number(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) {
			return 0, fmt.Errorf("partition value %v is not integral", x)
		}
		return x, nil
	case int32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case int:
		return float64(x), nil
	case json.Number:
		return x.Float64()
	}
	return 0, fmt.Errorf("partition value %v (%T) is not a number", v, v)
}
