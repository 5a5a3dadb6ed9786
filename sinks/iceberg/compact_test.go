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

// TestTierCaps: per partition, small files in ascending size are taken
// while each is at most twice the sum of those before it; files at or
// above the small bound are not its business.
func TestTierCaps(t *testing.T) {
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "b", Transform: iceberg.BucketTransform{NumBuckets: 4}})
	const small = 96 << 20
	for _, c := range []struct {
		name  string
		sizes []int64
		want  int64
	}{
		{"flushes of about one size", []int64{9100, 9000, 9300, 8900}, 9300},
		{"last run's output joins when the new files weigh half of it", []int64{9000, 9000, 9000, 36000}, 36000},
		{"a file more than twice the rest waits", []int64{9000, 9000, 9000, 60000}, 9000},
		{"a lone small file", []int64{5000}, 5000},
		{"files at the bound are not counted", []int64{9000, 9000, small}, 9000},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tasks []table.FileScanTask
			for i, n := range c.sizes {
				tasks = append(tasks, task(t, spec, 0, fmt.Sprint("f", i), n))
			}
			caps := tierCaps(tasks, small)
			if got := caps[partitionKey(tasks[0].File)]; got != c.want {
				t.Fatalf("cap %d, want %d", got, c.want)
			}
		})
	}
}

// TestQuietTableRewritesBounded: a quiet table flushes a ~9 KB file every
// interval and compacts (hot) every 16 flushes, rewriting what eligible
// keeps into one file. Over 3,000 flushes (8 hours at 10 s) each byte is
// rewritten a logarithmic number of times and the partition's file count
// stays bounded; rewriting every small file each run (no tiers) would
// rewrite the partition's whole history each time, hundreds of times the
// data.
func TestQuietTableRewritesBounded(t *testing.T) {
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "b", Transform: iceberg.BucketTransform{NumBuckets: 4}})
	const target, flush = 128 << 20, 9 << 10
	p := sink.CompactionPolicy{TargetFileSize: target, MinInputFiles: 5, HotMinInputFiles: 16, SmallRatio: 0.5, Hot: true}
	var files []table.FileScanTask
	var written, rewritten int64
	most := 0
	for i := range 3000 {
		files = append(files, task(t, spec, 0, fmt.Sprint("flush-", i), flush+int64(i%7)*64))
		written += flush
		if i%16 != 15 {
			continue
		}
		keep := map[string]bool{}
		var merged int64
		for _, tk := range eligible(files, p) {
			if tk.File.FileSizeBytes() < target*3/4 {
				keep[tk.File.FilePath()] = true
				merged += tk.File.FileSizeBytes()
			}
		}
		if len(keep) < 2 {
			continue
		}
		rest := files[:0:0]
		for _, tk := range files {
			if !keep[tk.File.FilePath()] {
				rest = append(rest, tk)
			}
		}
		files = append(rest, task(t, spec, 0, fmt.Sprint("compacted-", i), merged))
		rewritten += merged
		most = max(most, len(files))
	}
	amp := float64(rewritten) / float64(written)
	t.Logf("%d flushes: rewritten %.1fx the data, at most %d files", 3000, amp, most)
	if amp > 12 || most > 40 {
		t.Fatalf("rewritten %.1fx the data with at most %d files: want a logarithmic rewrite and a bounded file count", amp, most)
	}
}
