//go:build long

package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestRollingUpgrade replaces every node of a five-node fleet under load,
// one at a time, as a deployment does: start a new node (join only, new id,
// new data dir), wait until it is a healthy member, then SIGTERM the old one,
// which must drain and exit 0 within the drain timeout. Status is polled
// every 250 ms throughout: committed offsets never go backwards, and the
// largest freshness (now minus the newest committed record) is logged per
// table. Only a generous freshness bound is asserted: this machine is too
// noisy for timing assertions, the figure is for the notes. At the end
// every (partition, offset) is in its table exactly once.
func TestRollingUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end rolling replacement")
	}
	f := newFleet(t)
	old := f.startNew(5, 5, "old", false)
	f.settle(2 * time.Minute)
	p := f.startProducer(3)
	f.waitCommitted(time.Minute)
	w := f.watch(250 * time.Millisecond)
	w.waitProgress(time.Minute) // a baseline before the first replacement

	var drains []string
	for _, o := range old {
		n := f.startNew(1, 0, "new", false)[0]
		f.event("started %s (join only) to replace %s", n.id, o.id)
		f.settle(2 * time.Minute)
		rep, _, _ := f.status()
		role := ""
		if rep.Leader == o.id {
			role = " (the leader)"
		}
		f.event("SIGTERM %s%s", o.id, role)
		// The drain is bounded by drain_timeout; stopping the process
		// after it (worker, Raft, admin) gets a few seconds on top.
		code, took, err := f.terminate(o, fleetDrainTimeout+5*time.Second)
		switch {
		case err != nil:
			t.Errorf("%v", err)
		case code != 0:
			t.Errorf("%s exited with code %d after SIGTERM, want 0", o.id, code)
		case !strings.Contains(f.incarnationLog(o), "drained and left the group"):
			t.Errorf("%s exited without completing its drain (no 'drained and left the group' in its log)", o.id)
		}
		f.remove(o)
		f.event("%s exited %d after %.1fs", o.id, code, took.Seconds())
		drains = append(drains, took.Round(100*time.Millisecond).String())
		f.settle(2 * time.Minute)
	}
	w.waitProgress(time.Minute) // the replaced fleet keeps materializing
	maxFresh, summary := w.maxFreshness()
	t.Logf("rolling replacement of 5 nodes: drains took %s; %s", strings.Join(drains, ", "), summary)
	if maxFresh > 30 {
		t.Errorf("a table's freshness reached %.1fs during the replacement (bound 30s)", maxFresh)
	}
	f.verify(p.stop(), 3*time.Minute)
	w.stop()
}
