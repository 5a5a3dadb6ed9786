package raftnode

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/testing/wait"
)

// TestJudgeClocks: a member off the median by more than the bound (and the
// reading's uncertainty) is marked once it stays off clockSkewFor; the
// leader itself can be the odd one out; when half the group or more is
// off, nobody is marked.
func TestJudgeClocks(t *testing.T) {
	at := func(d time.Duration) clockSample { return clockSample{offset: d, uncertainty: 5 * time.Millisecond} }
	for _, tc := range []struct {
		name    string
		samples map[string]clockSample // the others; "l" leads at 0
		skewed  []string
	}{
		{"agree", map[string]clockSample{"b": at(time.Second), "c": at(-2 * time.Second)}, nil},
		{"one ahead", map[string]clockSample{"b": at(0), "c": at(5 * time.Minute)}, []string{"c"}},
		{"one behind", map[string]clockSample{"b": at(time.Second), "c": at(-2 * time.Minute)}, []string{"c"}},
		{"the leader off", map[string]clockSample{"b": at(-5 * time.Minute), "c": at(-5*time.Minute + time.Second)}, []string{"l"}},
		{"just inside the bound", map[string]clockSample{"b": at(0), "c": at(maxClockOffset)}, nil},
		{"within the uncertainty", map[string]clockSample{"b": at(0), "c": {offset: maxClockOffset + time.Second, uncertainty: 2 * time.Second}}, nil},
		{"two of four off", map[string]clockSample{"b": at(0), "c": at(5 * time.Minute), "d": at(6 * time.Minute)}, nil},
		{"two of five off", map[string]clockSample{"b": at(0), "c": at(time.Second), "d": at(5 * time.Minute), "e": at(-5 * time.Minute)}, []string{"d", "e"}},
		{"two nodes", map[string]clockSample{"b": at(5 * time.Minute)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHealthTracker(time.Second)
			t0 := time.Unix(1_000_000, 0)
			for _, now := range []time.Time{t0, t0.Add(clockSkewFor / 2), t0.Add(clockSkewFor)} {
				h.judgeClocks("l", cloneSamples(tc.samples), now)
			}
			var got, early []string
			for _, id := range []string{"b", "c", "d", "e", "l"} {
				if s, _ := h.clockSkewed(id, t0.Add(clockSkewFor)); s {
					got = append(got, id)
				}
				if s, _ := h.clockSkewed(id, t0.Add(clockSkewFor/2)); s {
					early = append(early, id)
				}
			}
			if !slices.Equal(got, tc.skewed) || len(early) > 0 {
				t.Fatalf("skewed %v (before clockSkewFor: %v), want %v", got, early, tc.skewed)
			}
		})
	}
}

func cloneSamples(m map[string]clockSample) map[string]clockSample {
	out := map[string]clockSample{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestClockSkewedMemberTakesNoWork: node c's clock runs 5 minutes ahead;
// the leader reads it in its health checks, shows it, and leaves c out of
// the live members once it has stayed off clockSkewFor; when c's clock is
// right again, c is live again.
func TestClockSkewedMemberTakesNoWork(t *testing.T) {
	var ahead atomic.Int64
	ahead.Store(int64(5 * time.Minute))
	g := newTestGroupSetup(t, []string{"a", "b", "c"}, 3, func(g *testGroup) {
		g.clock = map[string]func() time.Time{"c": func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }}
	})
	if g.leader() == g.nodes["c"] {
		if err := g.nodes["c"].TransferLeadership(); err != nil {
			t.Fatal(err)
		}
	}
	l := g.leader("c")
	wait.For(t, 10*time.Second, "the leader to read c's clock 5 minutes ahead", func() bool {
		for _, m := range l.Members() {
			if m.ID == "c" && m.ClockOffset > 4*time.Minute {
				return true
			}
		}
		return false
	})
	wait.For(t, clockSkewFor+10*time.Second, "the leader to leave c out of the live members", func() bool {
		return !slices.Contains(l.Live(), "c") && slices.ContainsFunc(l.Members(), func(m MemberHealth) bool { return m.ID == "c" && m.ClockSkewed })
	})
	if live := l.Live(); !slices.Contains(live, "a") || !slices.Contains(live, "b") {
		t.Fatalf("live %v: a and b agree and stay", live)
	}
	ahead.Store(0)
	wait.For(t, 10*time.Second, "c to be live again with its clock right", func() bool { return slices.Contains(l.Live(), "c") })
}
