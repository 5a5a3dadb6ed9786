package rss

import (
	"errors"
	"testing"
)

// sink keeps an allocation reachable until the work returns.
var sink []byte

// TestMeasure: touching 64 MiB shows as at least that much growth, even
// when it is dropped before the work returns (the peak, not the end, is
// measured); doing nothing shows as little.
func TestMeasure(t *testing.T) {
	t.Run("high-water mark", func(t *testing.T) { checkMeasure(t, true) })
	// Where clear_refs is refused: VmRSS sampled, and read once more at
	// the end (dropped memory stays resident until the runtime returns it).
	t.Run("sampled", func(t *testing.T) {
		saved := resetHWM
		t.Cleanup(func() { resetHWM = saved })
		resetHWM = func() error { return errors.New("refused") }
		checkMeasure(t, false)
	})
}

func checkMeasure(t *testing.T, exact bool) {
	const size = 64 << 20
	for _, c := range []struct {
		name     string
		work     func()
		min, max int64
	}{
		{"idle", func() {}, -1 << 40, 8 << 20},
		{"touch 64 MiB, free it", func() {
			sink = make([]byte, size)
			for i := 0; i < len(sink); i += 4096 {
				sink[i] = 1
			}
			sink = nil
		}, size - 4<<20, 1 << 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Measure(t, c.work)
			t.Log(r)
			if r.Exact != exact {
				t.Fatalf("exact %v, want %v", r.Exact, exact)
			}
			if g := r.Growth(); g < c.min || g > c.max {
				t.Fatalf("growth %d MiB, want between %d and %d MiB", g>>20, c.min>>20, c.max>>20)
			}
		})
	}
}
