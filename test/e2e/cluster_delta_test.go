//go:build long

package e2e

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/deltaview"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
)

// writeBothFormats maps topic's table with formats [iceberg, delta], so
// kills, pauses and drains hit a committer that publishes a Delta version
// in the same step as its Iceberg commit.
func (f *fleet) writeBothFormats(topic string) {
	if f.tableOpts == nil {
		f.tableOpts = map[string]map[string]any{}
	}
	if f.tableOpts[topic] == nil {
		f.tableOpts[topic] = map[string]any{}
	}
	f.tableOpts[topic]["formats"] = []string{"iceberg", "delta"}
}

// checkDelta reads a both-formats table's Delta log as an independent
// reader (internal/testing/deltaview) when the warehouse is local: versions
// and commit sequences contiguous (none skipped or published twice), the
// status's sequence the log's last, the same floe.offsets as the Iceberg
// snapshot, and every produced (partition, offset) once in the live files.
// On S3 the interop suite's delta_check.py does the same with delta-rs and
// Spark, from the report's delta_sequence.
func (f *fleet) checkDelta(tr status.TableReport, tbl *table.Table, per map[int32]int64) {
	f.t.Helper()
	if !slices.Contains(tr.Formats, "delta") {
		return
	}
	if tr.Delta == nil {
		f.t.Errorf("%s: formats %v but the status shows no Delta commit", tr.Table, tr.Formats)
		return
	}
	if !strings.HasPrefix(tbl.Location(), "file://") {
		return
	}
	root := strings.TrimPrefix(tbl.Location(), "file://")
	v := deltaview.Read(f.t, root)
	v.CheckContiguous(f.t)
	if tr.Delta.Sequence != int64(len(v.Txns)) {
		f.t.Errorf("%s: status says Delta commit sequence %d, the log holds %d", tr.Table, tr.Delta.Sequence, len(v.Txns))
	}
	offs, err := icebergsink.Offsets(tbl.CurrentSnapshot())
	if err != nil || !maps.Equal(offs, v.Offsets) {
		f.t.Errorf("%s: iceberg offsets %v (%v), delta offsets %v", tr.Table, offs, err, v.Offsets)
	}
	rows := v.Rows(f.t, root)
	var total int64
	for p, n := range per {
		for o := range n {
			if c := rows[fmt.Sprintf("%d/%d", p, o)]; c != 1 {
				f.t.Fatalf("%s delta view: partition %d offset %d appears %d times", tr.Table, p, o, c)
			}
		}
		total += n
	}
	if int64(len(rows)) != total {
		f.t.Fatalf("%s delta view: %d distinct offsets, want %d", tr.Table, len(rows), total)
	}
	f.event("%s delta log: %d versions, %d commit sequences, %d offsets once", tr.Table, len(v.Versions), len(v.Txns), total)
}
