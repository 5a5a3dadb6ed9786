package offsetcheck

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	icebergsink "github.com/floe-io/floe/sinks/iceberg"
)

// Counts scans a table with iceberg-go's reader and counts how often
// each (topic/partition, offset) appears. It reads only the metadata columns
// and shares no code with Floe's writer: it is the independent check behind
// the demo's summary and the exactly-once tests.
func Counts(ctx context.Context, tbl *table.Table) (map[string]map[int64]int, int64, error) {
	out := map[string]map[int64]int{}
	if tbl.CurrentSnapshot() == nil {
		return out, 0, nil
	}
	_, batches, err := tbl.Scan(table.WithSelectedFields(icebergsink.ColTopic, icebergsink.ColPartition, icebergsink.ColOffset)).ToArrowRecords(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("scanning %v: %w", tbl.Identifier(), err)
	}
	var rows int64
	for b, err := range batches {
		if err != nil {
			return nil, 0, fmt.Errorf("scanning %v: %w", tbl.Identifier(), err)
		}
		idx := func(name string) int {
			ids := b.Schema().FieldIndices(name)
			if len(ids) == 0 {
				return -1
			}
			return ids[0]
		}
		ti, pi, oi := idx(icebergsink.ColTopic), idx(icebergsink.ColPartition), idx(icebergsink.ColOffset)
		if ti < 0 || pi < 0 || oi < 0 {
			b.Release()
			return nil, 0, fmt.Errorf("scanning %v: metadata columns missing", tbl.Identifier())
		}
		topics := b.Column(ti).(*array.String)
		parts := b.Column(pi).(*array.Int32)
		offs := b.Column(oi).(*array.Int64)
		for i := range int(b.NumRows()) {
			key := fmt.Sprintf("%s/%d", topics.Value(i), parts.Value(i))
			if out[key] == nil {
				out[key] = map[int64]int{}
			}
			out[key][offs.Value(i)]++
			rows++
		}
		b.Release()
	}
	return out, rows, nil
}
