package iceberg

import (
	"fmt"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/sinks/sink"
)

func task(t *testing.T, spec iceberg.PartitionSpec, part int32, name string, size int64) table.FileScanTask {
	t.Helper()
	b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, "file:///w/data/"+name, iceberg.ParquetFile,
		map[int]any{1000: part}, nil, nil, 10, size)
	if err != nil {
		t.Fatal(err)
	}
	return table.FileScanTask{File: b.Build()}
}

// TestEligiblePartitions: per partition, hot partitions (a file committed
// within the cool-down) need the hot bound; cold ones the min count or the
// small-file ratio.
func TestEligiblePartitions(t *testing.T) {
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "b", Transform: iceberg.BucketTransform{NumBuckets: 4}})
	const target = 100 << 20
	var tasks []table.FileScanTask
	// partition 0: 6 small files, one of them recent (hot)
	for i := range 6 {
		tasks = append(tasks, task(t, spec, 0, fmt.Sprint("p0-", i), 1<<20))
	}
	// partition 1: 6 small files, none recent (cold)
	for i := range 6 {
		tasks = append(tasks, task(t, spec, 1, fmt.Sprint("p1-", i), 1<<20))
	}
	// partition 2: 2 small + 1 big: cold, under the count, at the ratio
	tasks = append(tasks, task(t, spec, 2, "p2-a", 1<<20), task(t, spec, 2, "p2-b", 1<<20), task(t, spec, 2, "p2-c", target))
	// partition 3: 1 small + 3 big: under count and ratio
	tasks = append(tasks, task(t, spec, 3, "p3-a", 1<<20), task(t, spec, 3, "p3-b", target), task(t, spec, 3, "p3-c", target), task(t, spec, 3, "p3-d", target))

	count := func(p sink.CompactionPolicy) map[int32]int {
		out := map[int32]int{}
		for _, tk := range eligible(tasks, p) {
			out[tk.File.Partition()[1000].(int32)]++
		}
		return out
	}
	base := sink.CompactionPolicy{TargetFileSize: target, MinInputFiles: 5, HotMinInputFiles: 8, SmallRatio: 0.5}

	cold := count(base)
	if cold[0] != 6 || cold[1] != 6 || cold[2] != 3 || cold[3] != 0 {
		t.Fatalf("cold table: %v", cold)
	}
	hot := base
	hot.Hot, hot.HotFiles = true, map[string]bool{"p0-5": true}
	got := count(hot)
	if got[0] != 0 || got[1] != 6 || got[2] != 3 {
		t.Fatalf("partition 0 hot: %v", got)
	}
	all := base
	all.Hot = true // restart: every partition counts as hot
	if got := count(all); len(got) != 0 {
		t.Fatalf("whole table hot: %v", got)
	}
	noRatio := base
	noRatio.SmallRatio = 0
	if got := count(noRatio); got[2] != 0 {
		t.Fatalf("ratio off: %v", got)
	}
}
