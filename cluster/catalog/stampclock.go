package catalog

import (
	"sync"
	"time"
)

// stepAccept is how long the wall clock must stay ahead of the stepless
// estimate before the stamps follow it: a forward step that lasts that
// long is a correction (NTP setting a clock that was behind), one that
// ends sooner is a fault.
const stepAccept = 10 * time.Minute

// stampClock is the time snapshots are stamped with: the wall clock, but
// never ahead of the wall time at an anchor plus the monotonic time since.
//
// Why: a snapshot stamped by a clock that ran ahead stays in the table's
// logs, and Iceberg (iceberg-go's transactions as Java's) refuses any
// later snapshot more than a minute older than it, so every committer
// with a correct clock would fail until real time caught up with the
// step. A backward step needs nothing here: the stamp never goes below
// the table's newest time (stampSnapshots).
type stampClock struct {
	wall func() time.Time // the wall clock without its monotonic reading (tests step it)
	mono func() time.Time // time.Now: only its monotonic reading is used

	mu         sync.Mutex
	anchorWall time.Time
	anchorMono time.Time
	offSince   time.Time // monotonic; zero while the wall clock is on time
}

func newStampClock(wall, mono func() time.Time) *stampClock {
	c := &stampClock{wall: wall, mono: mono}
	c.anchorWall, c.anchorMono = wall(), mono()
	return c
}

// now is the stamp time: the wall clock, held back to the stepless estimate
// while it is ahead of it. A wall clock off the estimate, either way, for
// stepAccept becomes the new anchor: a lasting step is a correction.
func (c *stampClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	wall, mono := c.wall(), c.mono()
	limit := c.anchorWall.Add(mono.Sub(c.anchorMono))
	if d := wall.Sub(limit); d <= time.Second && d >= -time.Second {
		c.anchorWall, c.anchorMono, c.offSince = wall, mono, time.Time{} // on time: keep the anchor fresh
		return wall
	}
	if c.offSince.IsZero() {
		c.offSince = mono
	} else if mono.Sub(c.offSince) >= stepAccept {
		c.anchorWall, c.anchorMono, c.offSince = wall, mono, time.Time{}
		return wall
	}
	if wall.Before(limit) {
		return wall // behind: followed, the table's newest time is the floor
	}
	return limit
}
