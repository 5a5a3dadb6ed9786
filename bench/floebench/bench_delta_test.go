package floebench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestFormatRunsPrint: the fastest pass of each format is the figure and
// the ratio is the throughput with [iceberg, delta] over [iceberg]; without
// delta passes nothing is printed.
func TestFormatRunsPrint(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name       string
		ice, delta []time.Duration
		want       string
	}{
		{"no delta passes", []time.Duration{2 * s}, nil, ""},
		{"delta slower", []time.Duration{4 * s, 2 * s}, []time.Duration{3 * s, 2500 * time.Millisecond}, "throughput: 0.800"},
		{"noise", []time.Duration{2 * s, 3 * s}, []time.Duration{2 * s, 9 * s}, "throughput: 1.000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := formatRuns{icebergAll: tc.ice, deltaAll: tc.delta, iceberg: fastest(tc.ice), delta: fastest(tc.delta), versions: 3}
			var out bytes.Buffer
			r.print(&out)
			if tc.want == "" && out.Len() != 0 || !strings.Contains(out.String(), tc.want) {
				t.Fatalf("printed %q, want %q", out.String(), tc.want)
			}
		})
	}
}
