package membudget

import (
	"math"
	"testing"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		budget int64
		want   Split
	}{
		{0, Split{}},
		{-5, Split{}},
		{1 << 30, Split{Budget: 1 << 30, Records: 256 << 20, Fetch: 128 << 20, SoftLimit: 1<<30 + 256<<20}},
		{64 << 20, Split{Budget: 64 << 20, Records: 16 << 20, Fetch: 8 << 20, SoftLimit: 320 << 20}},
		{math.MaxInt64, Split{Budget: math.MaxInt64, Records: math.MaxInt64 / 4, Fetch: math.MaxInt64 / 8, SoftLimit: math.MaxInt64}},
	} {
		if got := Of(tc.budget); got != tc.want {
			t.Errorf("Of(%d) = %+v, want %+v", tc.budget, got, tc.want)
		}
	}
}

func TestForRecords(t *testing.T) {
	for _, records := range []int64{1, 1000, 1 << 20, 3<<20 + 7} {
		b := ForRecords(records)
		if Of(b).Records <= records {
			t.Errorf("ForRecords(%d) = %d, whose records' share %d is short", records, b, Of(b).Records)
		}
	}
}
