package iceberg

import (
	"fmt"
	"maps"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ledger"
)

// describe turns a written data file into its ledger descriptor. Partition
// values go twice: exact, in Iceberg's single-value binary form
// (PartValues, which this version reads), and as the Go values (Partition,
// JSON numbers and strings through Raft) that a node of the release before
// reads: it must still commit what this node records during a rolling
// upgrade, as it did before, and never commit it wrong (legacyJSON).
func describe(df iceberg.DataFile) ledger.FileDescriptor {
	return ledger.FileDescriptor{
		Path:         df.FilePath(),
		Format:       string(df.FileFormat()),
		SpecID:       df.SpecID(),
		RecordCount:  df.Count(),
		SizeBytes:    df.FileSizeBytes(),
		Partition:    legacyJSON(df.Partition()),
		PartValues:   encodePartition(df.Partition()),
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
	part, err := partitionValues(meta, *spec, d)
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
