package floebench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/sinks/iceberg/upsert"
)

// TestUpsertRunsPrint: the ratio is the median over pairs of passes of
// the upsert throughput over the append one (an outlier pair moves it
// less than the mean), by wall time and by CPU; the index and the rebuild
// are scaled per million keys.
func TestUpsertRunsPrint(t *testing.T) {
	s := time.Second
	r := upsertRuns{
		keys: 200_000, updates: 1_000_000, partitions: 8,
		appends: []upsertPass{{dur: 10 * s, cpu: 10}, {dur: 10 * s, cpu: 10}, {dur: 10 * s, cpu: 10}},
		upserts: []upsertPass{{dur: 20 * s, cpu: 25}, {dur: 40 * s, cpu: 50}, {dur: 16 * s, cpu: 20}},
		index:   upsert.IndexSize{FileBytes: 100 << 20, PageBytes: 50 << 20, InuseBytes: 25 << 20},
		// 200,000 keys in 3 s: 15 s per million.
		indexKeys: 200_000, rebuild: 3 * s, rebuilds: 1, rebuildKeys: 200_000, rebuildPass: upsertPass{dur: 5 * s, cpu: 2},
	}
	var out bytes.Buffer
	r.print(&out)
	for _, want := range []string{
		"throughput: 0.500 (median of pairs: 0.500 0.250 0.625)",
		"append CPU / upsert CPU: 0.400 (median of pairs: 0.400 0.200 0.500)",
		"upsert-keys.db 100.0 MiB = 500.0 MiB per million keys (tree pages 50.0 MiB, 50% full",
		"200000 keys in 3.00 s = 15.00 s per million keys",
		"upsert 3      16.00      62500",
		"rebuild        5.00          -    2.00        -",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed\n%s\nwant it to contain %q", out.String(), want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{9, 1, 2}, 2},
		{[]float64{4, 1, 2, 3}, 2.5},
	} {
		if got := median(tc.v); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}
