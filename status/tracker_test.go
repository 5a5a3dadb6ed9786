package status

import (
	"strings"
	"testing"
	"time"
)

func TestStatusStates(t *testing.T) {
	old := FailAfter
	FailAfter = 50 * time.Millisecond
	defer func() { FailAfter = old }()
	cases := []struct {
		name      string
		steps     func(s *Tracker)
		wait      time.Duration
		want      string
		reasonHas string
	}{
		{name: "new table is pending", steps: func(s *Tracker) { s.Update("t", "t", func(*TableStatus) {}) }, want: StatePending},
		{name: "a flush makes it running", steps: func(s *Tracker) {
			s.Update("t", "t", func(t *TableStatus) { t.Flushes++; t.Recompute() })
		}, want: StateRunning},
		{name: "a problem degrades it", steps: func(s *Tracker) {
			s.Update("t", "t", func(t *TableStatus) { t.Problem("s3", "connection refused") })
		}, want: StateDegraded, reasonHas: "s3: connection refused"},
		{name: "a config problem is a config issue", steps: func(s *Tracker) {
			s.Update("t", "t", func(t *TableStatus) { t.Problem("config naming", "clash") })
		}, want: StateConfigIssue},
		{name: "degraded past FailAfter is failed", steps: func(s *Tracker) {
			s.Update("t", "t", func(t *TableStatus) { t.Problem("s3", "connection refused") })
		}, wait: 80 * time.Millisecond, want: StateFailed, reasonHas: "failing for"},
		{name: "recovery clears failed", steps: func(s *Tracker) {
			s.Update("t", "t", func(t *TableStatus) { t.Problem("s3", "connection refused") })
			time.Sleep(80 * time.Millisecond)
			s.Update("t", "t", func(t *TableStatus) { t.Commits++; t.Problem("s3", "") })
		}, want: StateRunning},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewTracker()
			c.steps(s)
			time.Sleep(c.wait)
			snap, _ := s.Snapshot()
			got := snap["t"]
			if got.State != c.want || !strings.Contains(got.Reason, c.reasonHas) {
				t.Fatalf("state %s reason %q, want %s with %q", got.State, got.Reason, c.want, c.reasonHas)
			}
		})
	}
}
