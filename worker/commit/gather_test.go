package commit

import (
	"testing"
	"time"

	"github.com/floe-io/floe/internal/ledger"
)

func TestGatherWindow(t *testing.T) {
	for _, c := range []struct{ interval, want time.Duration }{
		{10 * time.Second, time.Second},
		{time.Minute, time.Second},
		{2 * time.Second, 200 * time.Millisecond},
		{50 * time.Millisecond, 5 * time.Millisecond},
	} {
		if got := gatherWindow(c.interval); got != c.want {
			t.Errorf("gatherWindow(%s) = %s, want %s", c.interval, got, c.want)
		}
	}
}

// TestGatherHold: the first entry of a slot is held for the other
// holders' entries, measured from when the loop first saw it; it commits
// at once when every holder has an entry in, when one node holds every
// partition, when the backlog fills a commit, and once the window is over.
func TestGatherHold(t *testing.T) {
	const window = time.Second
	t0 := time.Unix(1_800_000_000, 0)
	e := func(id, node string) ledger.Entry { return ledger.Entry{ID: id, Node: node} }
	full := make([]ledger.Entry, maxEntriesPerCommit)
	for i := range full {
		full[i] = e("f", "n1")
	}
	for _, c := range []struct {
		name    string
		entries []ledger.Entry
		holders int
		at      time.Duration // after t0, where the hold began at t0 (for "a")
		want    time.Duration // hold until t0+want; -1 for no hold
	}{
		{"one node holds every partition", []ledger.Entry{e("a", "n1")}, 1, 0, -1},
		{"the other holder's entry is still to come", []ledger.Entry{e("a", "n1")}, 2, 0, window},
		{"still within the window", []ledger.Entry{e("a", "n1")}, 2, 400 * time.Millisecond, window},
		{"the window is over", []ledger.Entry{e("a", "n1")}, 2, window, -1},
		{"every holder is in", []ledger.Entry{e("a", "n1"), e("b", "n2")}, 2, 100 * time.Millisecond, -1},
		{"two of three holders are in", []ledger.Entry{e("a", "n1"), e("b", "n2")}, 3, 100 * time.Millisecond, window},
		{"a backlog fills a commit", full, 2, 0, -1},
		{"nothing pending", nil, 2, 0, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := gather{}
			g.hold([]ledger.Entry{e("a", "n1")}, 2, window, t0) // the loop first saw "a" at t0
			got := g.hold(c.entries, c.holders, window, t0.Add(c.at))
			if c.want < 0 {
				if !got.IsZero() {
					t.Fatalf("held until %s, want no hold", got.Sub(t0))
				}
				return
			}
			if !got.Equal(t0.Add(c.want)) {
				t.Fatalf("held until %v, want t0+%s", got, c.want)
			}
		})
	}
	// A new oldest entry (the held one was committed) starts a new hold.
	g := gather{}
	g.hold([]ledger.Entry{e("a", "n1")}, 2, window, t0)
	if got := g.hold([]ledger.Entry{e("c", "n1")}, 2, window, t0.Add(5*time.Second)); !got.Equal(t0.Add(6 * time.Second)) {
		t.Fatalf("a new slot's hold ends %v, want t0+6s", got)
	}
}
