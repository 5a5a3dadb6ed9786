package phase

import (
	"fmt"
	"testing"
	"time"
)

func TestUntilSlot(t *testing.T) {
	base := time.Unix(1_700_000_000, 0) // a multiple of 10 s
	for _, tc := range []struct {
		now      time.Time
		period   time.Duration
		offset   time.Duration
		want     time.Duration
		describe string
	}{
		{base, 10 * time.Second, 0, 10 * time.Second, "on a slot: the next one"},
		{base.Add(time.Second), 10 * time.Second, 0, 9 * time.Second, "just after a slot"},
		{base, 10 * time.Second, 3 * time.Second, 3 * time.Second, "before the offset"},
		{base.Add(4 * time.Second), 10 * time.Second, 3 * time.Second, 9 * time.Second, "past the offset"},
		{base.Add(3 * time.Second), 10 * time.Second, 3 * time.Second, 10 * time.Second, "on the offset"},
		{base, 0, 0, 0, "no period"},
	} {
		if got := UntilSlot(tc.now, tc.period, tc.offset); got != tc.want {
			t.Errorf("%s: UntilSlot = %s, want %s", tc.describe, got, tc.want)
		}
	}
}

// TestOfSpreads: the phases of many tables cover the period evenly (no
// tenth of it holds more than twice its share), and a table's phase is
// stable.
func TestOfSpreads(t *testing.T) {
	const n = 1000
	var buckets [10]int
	for i := range n {
		f := Of(fmt.Sprintf("bench.t%04d", i))
		if f < 0 || f >= 1 {
			t.Fatalf("phase %v out of [0, 1)", f)
		}
		buckets[int(f*10)]++
	}
	for i, b := range buckets {
		if b > 2*n/10 || b < n/20 {
			t.Errorf("tenth %d holds %d of %d phases: %v", i, b, n, buckets)
		}
	}
	if Of("a.b") != Of("a.b") {
		t.Fatal("a table's phase changed")
	}
}
