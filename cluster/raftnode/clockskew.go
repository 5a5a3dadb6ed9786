package raftnode

import (
	"slices"
	"time"
)

// Clock skew. A committer whose wall clock is more than a minute behind a
// table's newest snapshot cannot commit it (iceberg-go refuses the
// snapshot before it reaches the catalog), and snapshot expiry reads the
// committer's clock: one node whose NTP broke would stall its tables until
// someone fixed it. So the leader reads each member's clock in its health
// checks, and a member whose clock stays more than maxClockOffset off the
// group's median for clockSkewFor takes no work, like a halted one; its
// tables move to nodes whose clocks agree. A step the clock corrects within
// clockSkewFor moves nothing. The median includes the leader's own clock,
// so a leader whose clock is the odd one out takes itself out of the
// placement. When half the group or more looks off, nobody can tell whose
// clock is right, and nothing is marked.

const (
	maxClockOffset = 30 * time.Second
	clockSkewFor   = 10 * time.Second
)

// clockSample is one member's clock as the leader read it: its offset from
// the leader's wall clock at the middle of the round trip, and half the
// round trip (how far off the reading may be).
type clockSample struct {
	offset, uncertainty time.Duration
}

// sampleClock turns one health check into a sample: sent and received by
// the leader's clock, remote the member's wall clock in its answer.
func sampleClock(sent, received time.Time, remoteMs int64) clockSample {
	half := received.Sub(sent) / 2
	mid := sent.Round(0).Add(half) // wall clock: Round(0) drops the monotonic reading
	return clockSample{offset: time.UnixMilli(remoteMs).Sub(mid), uncertainty: half}
}

// judgeClocks updates which members' clocks are off the median (locked by
// the caller): samples holds this round's readings of the others, the
// leader itself at offset 0 under self.
func (h *healthTracker) judgeClocks(self string, samples map[string]clockSample, now time.Time) {
	samples[self] = clockSample{}
	offsets := make([]time.Duration, 0, len(samples))
	for _, s := range samples {
		offsets = append(offsets, s.offset)
	}
	slices.Sort(offsets)
	median := offsets[len(offsets)/2]
	if len(offsets)%2 == 0 {
		median = (offsets[len(offsets)/2-1] + median) / 2
	}
	off := map[string]time.Duration{}
	for id, s := range samples {
		if d := s.offset - median; d.Abs() > maxClockOffset+s.uncertainty {
			off[id] = d
		}
	}
	if 2*len(off) >= len(samples) {
		clear(off) // no majority agrees: nobody can tell whose clock is right
	}
	for id, s := range samples {
		h.clockOffset[id] = s.offset - median
		if _, bad := off[id]; !bad {
			delete(h.clockOffSince, id)
		} else if _, ok := h.clockOffSince[id]; !ok {
			h.clockOffSince[id] = now
		}
	}
}

// clockSkewed reports whether the member's clock has been off the median
// for clockSkewFor, and by how much it was off at the last reading.
func (h *healthTracker) clockSkewed(id string, now time.Time) (bool, time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	since, ok := h.clockOffSince[id]
	return ok && now.Sub(since) >= clockSkewFor, h.clockOffset[id]
}
