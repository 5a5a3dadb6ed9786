package worker

import "github.com/floe-io/floe/internal/ledger"

// The fake cluster notifies changes like the FSM: Watch's channel closes
// at every change, WatchTable's at a change that may concern the table
// (its ledger, committer, schema requests, resume, partitions), so the
// worker's tests exercise the per-table waits of its loops.

// watches is the fake cluster's change notification. Fields are guarded
// by fakeCluster.mu.
type watches struct {
	changed   chan struct{}            // closed at every change (Watch)
	tableCh   map[string]chan struct{} // closed at a change to the table (WatchTable)
	broadcast bool                     // WatchTable is Watch: the wakeups before per-table watches
	holders   map[chan struct{}]int    // WatchTable calls answered by each open channel
	woken     int                      // WatchTable calls answered by a change
	taken     chan struct{}            // closed (and replaced) at every WatchTable call
}

func newWatches() watches {
	return watches{changed: make(chan struct{}), tableCh: map[string]chan struct{}{}, holders: map[chan struct{}]int{}, taken: make(chan struct{})}
}

// Watch implements State: closed at the next change, whatever it changed.
func (c *fakeCluster) Watch() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// WatchTable implements State: closed at the next change to table key;
// with broadcast set, at the next change whatever it changed, as every
// loop waited before per-table watches.
func (c *fakeCluster) WatchTable(key string) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.tableCh[key]
	switch {
	case c.broadcast:
		ch = c.changed
	case !ok:
		ch = make(chan struct{})
		c.tableCh[key] = ch
	}
	c.holders[ch]++
	close(c.taken)
	c.taken = make(chan struct{})
	return ch
}

// notify wakes the global watchers and those of the tables named. Called
// with c.mu held.
func (c *fakeCluster) notify(tables ...string) {
	c.wake(c.changed)
	c.changed = make(chan struct{})
	for _, key := range tables {
		if ch, ok := c.tableCh[key]; ok {
			c.wake(ch)
			delete(c.tableCh, key)
		}
	}
}

// wake closes ch and counts the WatchTable calls it answered as woken.
func (c *watches) wake(ch chan struct{}) {
	close(ch)
	c.woken += c.holders[ch]
	delete(c.holders, ch)
}

// notifyPartition wakes the watchers of the table a partition routes
// into, or of every table when no source routes it (as the FSM does).
// Called with c.mu held.
func (c *fakeCluster) notifyPartition(tp ledger.TopicPartition) {
	for _, s := range c.sources {
		if s.Topic == tp.Topic {
			c.notify(s.Table)
			return
		}
	}
	tables := make([]string, 0, len(c.tableCh))
	for key := range c.tableCh {
		tables = append(tables, key)
	}
	c.notify(tables...)
}

// sourceTables returns the tables the sources route into. Called with
// c.mu held.
func (c *fakeCluster) sourceTables() []string {
	var out []string
	for _, s := range c.sources {
		out = append(out, s.Table)
	}
	return out
}

// rounds returns how many rounds table key's commit loop has made (one
// Committer read each).
func (c *fakeCluster) rounds(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.committerReadsOf[key]
}

// wakeups returns how many WatchTable calls have been answered by a
// change so far: in the worker's tests only commit loops call it, once
// per round, so it counts the loops each change woke.
func (c *fakeCluster) wakeups() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.woken
}

// waiting reports whether the loop of every table of keys has taken the
// channel the next change to its table closes (a change now wakes them),
// and else a channel closed at the next WatchTable call, which may make it
// so.
func (c *fakeCluster) waiting(keys []string) (bool, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waitingLocked(keys), c.taken
}

func (c *fakeCluster) waitingLocked(keys []string) bool {
	if c.broadcast {
		return c.holders[c.changed] >= len(keys)
	}
	for _, k := range keys {
		if ch, ok := c.tableCh[k]; !ok || c.holders[ch] == 0 {
			return false
		}
	}
	return true
}
