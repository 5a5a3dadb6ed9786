package iceberg

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/ledger"
)

// describe turns a written data file into its ledger descriptor.
func describe(df iceberg.DataFile) ledger.FileDescriptor {
	return ledger.FileDescriptor{
		Path:         df.FilePath(),
		Format:       string(df.FileFormat()),
		SpecID:       df.SpecID(),
		RecordCount:  df.Count(),
		SizeBytes:    df.FileSizeBytes(),
		Partition:    maps.Clone(df.Partition()),
		ColumnSizes:  maps.Clone(df.ColumnSizes()),
		ValueCounts:  maps.Clone(df.ValueCounts()),
		NullCounts:   maps.Clone(df.NullValueCounts()),
		NaNCounts:    maps.Clone(df.NaNValueCounts()),
		LowerBounds:  maps.Clone(df.LowerBoundValues()),
		UpperBounds:  maps.Clone(df.UpperBoundValues()),
		SplitOffsets: df.SplitOffsets(),
		SortOrderID:  df.SortOrderID(),
	}
}

// rebuild turns a descriptor back into a data file of the table meta.
func rebuild(meta table.Metadata, d ledger.FileDescriptor) (iceberg.DataFile, error) {
	var spec *iceberg.PartitionSpec
	for _, s := range meta.PartitionSpecs() {
		if int32(s.ID()) == d.SpecID {
			spec = &s
			break
		}
	}
	if spec == nil {
		return nil, fmt.Errorf("data file %s: table has no partition spec %d", d.Path, d.SpecID)
	}
	part, err := partitionValues(meta, *spec, d.Partition)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", d.Path, err)
	}
	b, err := iceberg.NewDataFileBuilder(*spec, iceberg.EntryContentData, d.Path, iceberg.FileFormat(d.Format), part, nil, nil, d.RecordCount, d.SizeBytes)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", d.Path, err)
	}
	b.ColumnSizes(d.ColumnSizes).ValueCounts(d.ValueCounts).NullValueCounts(d.NullCounts).
		NaNValueCounts(d.NaNCounts).LowerBoundValues(d.LowerBounds).UpperBoundValues(d.UpperBounds)
	if len(d.SplitOffsets) > 0 {
		b.SplitOffsets(d.SplitOffsets)
	}
	if d.SortOrderID != nil {
		b.SortOrderID(*d.SortOrderID)
	}
	return b.Build(), nil
}

// partitionValues restores partition values whose Go types a JSON round trip
// through the ledger erased (numbers come back as float64).
func partitionValues(meta table.Metadata, spec iceberg.PartitionSpec, in map[int]any) (map[int]any, error) {
	if len(in) == 0 {
		return nil, nil
	}
	pt := spec.PartitionType(meta.CurrentSchema())
	out := map[int]any{}
	for _, f := range pt.FieldList {
		v, ok := in[f.ID]
		if !ok || v == nil {
			out[f.ID] = nil
			continue
		}
		switch f.Type.(type) {
		case iceberg.Int32Type, iceberg.DateType:
			n, err := number(v)
			if err != nil {
				return nil, err
			}
			if _, ok := f.Type.(iceberg.DateType); ok {
				out[f.ID] = iceberg.Date(int32(n))
			} else {
				out[f.ID] = int32(n)
			}
		case iceberg.Int64Type, iceberg.TimestampType, iceberg.TimestampTzType:
			n, err := number(v)
			if err != nil {
				return nil, err
			}
			out[f.ID] = int64(n)
		case iceberg.StringType:
			out[f.ID] = fmt.Sprint(v)
		default:
			out[f.ID] = v
		}
	}
	return out, nil
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

// RebuildForBench exposes rebuild to the benchmark command.
func RebuildForBench(meta table.Metadata, d ledger.FileDescriptor) (iceberg.DataFile, error) {
	return rebuild(meta, d)
}
