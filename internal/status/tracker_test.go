package status

import (
	"strings"
	"testing"
	"time"
)

// fakeClock is a tracker's clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestStatusStates(t *testing.T) {
	cases := []struct {
		name      string
		steps     func(s *Tracker, clock *fakeClock)
		wait      time.Duration
		want      string
		reasonHas string
	}{
		{name: "new table is pending", steps: func(s *Tracker, clock *fakeClock) { s.Update("t", "t", func(*TableStatus) {}) }, want: StatePending},
		{name: "a flush makes it running", steps: func(s *Tracker, clock *fakeClock) {
			s.Update("t", "t", func(t *TableStatus) { t.Flushes++; t.Recompute() })
		}, want: StateRunning},
		{name: "a problem degrades it", steps: func(s *Tracker, clock *fakeClock) {
			s.Update("t", "t", func(t *TableStatus) { t.Problem("s3", "connection refused") })
		}, want: StateDegraded, reasonHas: "s3: connection refused"},
		{name: "a config problem is a config issue", steps: func(s *Tracker, clock *fakeClock) {
			s.Update("t", "t", func(t *TableStatus) { t.Problem("config naming", "clash") })
		}, want: StateConfigIssue},
		{name: "degraded past FailAfter is failed", steps: func(s *Tracker, clock *fakeClock) {
			s.Update("t", "t", func(t *TableStatus) { t.Problem("s3", "connection refused") })
		}, wait: FailAfter + time.Second, want: StateFailed, reasonHas: "failing for"},
		{name: "recovery clears failed", steps: func(s *Tracker, clock *fakeClock) {
			s.Update("t", "t", func(t *TableStatus) { t.Problem("s3", "connection refused") })
			clock.advance(FailAfter + time.Second)
			s.Update("t", "t", func(t *TableStatus) { t.Commits++; t.Problem("s3", "") })
		}, want: StateRunning},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(1700000000, 0)}
			s := NewTracker()
			s.now = clock.now
			c.steps(s, clock)
			clock.advance(c.wait)
			snap, _ := s.Snapshot()
			got := snap["t"]
			if got.State != c.want || !strings.Contains(got.Reason, c.reasonHas) {
				t.Fatalf("state %s reason %q, want %s with %q", got.State, got.Reason, c.want, c.reasonHas)
			}
		})
	}
}
