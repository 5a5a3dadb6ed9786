package phase

import (
	"hash/fnv"
	"time"
)

// Of is the table's phase: a fraction in [0, 1) fixed by its key.
func Of(table string) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(table))
	// FNV's high bits barely change between names that differ in their
	// last characters (t0001, t0002): mix them (splitmix64's finalizer).
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

// Offset is the phase as a duration within period.
func Offset(table string, period time.Duration) time.Duration {
	return time.Duration(Of(table) * float64(period))
}

// UntilSlot is how long from now until the table's next slot: the next
// instant, strictly after now, that lies offset past a multiple of period
// since the Unix epoch. Every node computes the same slots for a table.
func UntilSlot(now time.Time, period, offset time.Duration) time.Duration {
	if period <= 0 {
		return 0
	}
	into := (time.Duration(now.UnixNano()) - offset) % period
	if into < 0 {
		into += period
	}
	return period - into
}
