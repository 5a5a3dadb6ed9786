package deltaview

import (
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// Stream is what a Delta streaming reader (Spark's readStream with its
// defaults, Flink's Delta source) reads from the table: version by
// version, the rows of every add with dataChange true (less its deletion
// vector's rows), by "partition/offset"; adds with dataChange false
// (compaction) are skipped. Such a reader stops at a remove with
// dataChange true ("Detected a data update"), unless told to ignore
// changes: DataRemoves counts those removes.
type Stream struct {
	Rows        map[string]int
	DataRemoves int
	Operations  []string // each version's commitInfo operation, in order
}

// ReadStream replays the log under root as a streaming reader from
// version 0.
func ReadStream(t testing.TB, root string) Stream {
	t.Helper()
	s := Stream{Rows: map[string]int{}}
	eachVersion(t, root, func(name string, _ int64, lines [][]byte) {
		for _, line := range lines {
			s.apply(t, root, name, line)
		}
	})
	return s
}

// apply reads one action line as a streaming reader.
func (s *Stream) apply(t testing.TB, root, name string, line []byte) {
	t.Helper()
	var a struct {
		Add *struct {
			Path           string
			DataChange     bool
			DeletionVector *DV
		}
		Remove *struct {
			DataChange bool
		}
		CommitInfo *struct {
			Operation string
		}
	}
	if err := json.Unmarshal(line, &a); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	switch {
	case a.CommitInfo != nil:
		s.Operations = append(s.Operations, a.CommitInfo.Operation)
	case a.Remove != nil && a.Remove.DataChange:
		s.DataRemoves++
	case a.Add != nil && a.Add.DataChange:
		var deleted map[int64]bool
		if a.Add.DeletionVector != nil {
			var err error
			if deleted, err = a.Add.DeletionVector.RowsAt(root); err != nil {
				t.Fatalf("%s: deletion vector of %s: %v", name, a.Add.Path, err)
			}
		}
		var pos int64
		readLive(t, root, a.Add.Path, func(_ arrow.Table, _, _ int, key string) {
			if !deleted[pos] {
				s.Rows[key]++
			}
			pos++
		})
	}
}
