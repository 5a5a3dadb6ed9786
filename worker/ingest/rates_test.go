package ingest

import (
	"math"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/ledger"
)

// TestRatesEWMA: a steady 1000 B/s reads as 1000*(1-2^-t/halflife) however
// often the rate is read, and idleness halves it every half-life.
func TestRatesEWMA(t *testing.T) {
	tp := ledger.TopicPartition{Topic: "orders", Partition: 3}
	cases := []struct {
		name      string
		readEvery int // seconds between reads while fed
	}{
		{"read every second", 1},
		{"read every 10 s", 10},
		{"read once", 60},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Unix(1_700_000_000, 0)
			r := newRates(30*time.Second, func() time.Time { return now })
			m := r.acquire(tp)
			for s := 1; s <= 60; s++ {
				m.add(1000)
				now = now.Add(time.Second)
				if s%tc.readEvery == 0 {
					r.snapshot()
				}
			}
			near(t, "fed for two half-lives", r.snapshot()[tp], 750)
			now = now.Add(30 * time.Second)
			near(t, "idle for a half-life", r.snapshot()[tp], 375)
			now = now.Add(30 * time.Second)
			near(t, "idle for two half-lives", r.snapshot()[tp], 187.5)

			r.release(m)
			if _, ok := r.snapshot()[tp]; ok {
				t.Fatal("a partition no longer fetched is reported")
			}
			now = now.Add(5 * time.Minute)
			m = r.acquire(tp)
			if got := r.snapshot()[tp]; got <= 0 || got > 1 {
				t.Fatalf("after 5 idle minutes the rate is %v, want nearly 0", got)
			}
			r.release(m)
		})
	}
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > want*0.01 {
		t.Fatalf("%s: rate %.2f, want %.2f", what, got, want)
	}
}
