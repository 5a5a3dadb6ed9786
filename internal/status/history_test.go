package status

import (
	"strings"
	"testing"
	"time"
)

// TestHistoryRing: samples come back oldest first, the ring keeps only the
// newest HistorySize of a table, and a table no longer named is forgotten.
func TestHistoryRing(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name      string
		n         int // samples recorded for db.a
		wantLen   int
		wantFirst float64
	}{
		{"empty", 0, 0, 0},
		{"partial", 5, 5, 0},
		{"exactly full", HistorySize, HistorySize, 0},
		{"wrapped", HistorySize + 7, HistorySize, 7},
		{"wrapped twice", 2*HistorySize + 3, HistorySize, HistorySize + 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := NewHistory()
			for i := range c.n {
				h.Record(t0.Add(time.Duration(i)*HistoryInterval), map[string]Sample{"db.a": {FreshnessSec: float64(i), Rows: int64(i), Lag: 1}})
			}
			got := h.Samples("db.a")
			if len(got) != c.wantLen {
				t.Fatalf("%d samples, want %d", len(got), c.wantLen)
			}
			for i := 1; i < len(got); i++ {
				if !got[i].At.After(got[i-1].At) || got[i].FreshnessSec != got[i-1].FreshnessSec+1 || got[i].Rows != got[i-1].Rows+1 || got[i].Lag != 1 {
					t.Fatalf("sample %d %+v after %+v: not oldest first", i, got[i], got[i-1])
				}
			}
			if len(got) > 0 && (got[0].FreshnessSec != c.wantFirst || got[len(got)-1].FreshnessSec != float64(c.n-1)) {
				t.Fatalf("first %v last %v, want %v and %d", got[0].FreshnessSec, got[len(got)-1].FreshnessSec, c.wantFirst, c.n-1)
			}
		})
	}
	h := NewHistory()
	h.Record(t0, map[string]Sample{"db.a": {FreshnessSec: 1}, "db.b": {FreshnessSec: 2}})
	h.Record(t0.Add(time.Second), map[string]Sample{"db.b": {FreshnessSec: 3}})
	if got := h.Samples("db.a"); got != nil {
		t.Fatalf("dropped table kept %v", got)
	}
	if got := h.Samples("db.b"); len(got) != 2 {
		t.Fatalf("db.b has %d samples, want 2", len(got))
	}
}

func TestAddDeadLetterBounded(t *testing.T) {
	ts := TableStatus{now: time.Now}
	for i := range 8 {
		ts.AddDeadLetter("t", 0, int64(i), strings.Repeat("x", 600))
	}
	if len(ts.LastDeadLetters) != MaxLastDeadLetters || ts.LastDeadLetters[0].Offset != 3 || ts.LastDeadLetters[4].Offset != 7 {
		t.Fatalf("kept %+v", ts.LastDeadLetters)
	}
	if n := len(ts.LastDeadLetters[0].Error); n != 515 {
		t.Fatalf("reason of %d bytes, want 512 + ...", n)
	}
	snap := ts.snapshot()
	snap.LastDeadLetters[0].Error = "changed"
	if ts.LastDeadLetters[0].Error == "changed" {
		t.Fatal("the snapshot shares the dead letters with the live status")
	}
}
