package commit

import (
	"time"

	"github.com/floe-io/floe/internal/ledger"
)

// Gathering one slot's entries into one commit.
//
// Every node flushes a table at the same wall-clock slots (worker/phase),
// so when a table's partitions sit on several nodes each of them records
// an entry at about the same moment. Committed as they arrive, that is one
// snapshot per node per interval: in a 3-node cluster a table of two
// partitions committed about twice per interval, doubling its snapshots,
// metadata files and Raft entries (issue 38). The committer holds the
// first pending entry for up to gatherWindow while other holders' entries
// may still come, and commits them together; it commits at once when
// every holder has an entry pending, when one node holds every partition,
// or when the backlog fills a commit.

// maxGatherWindow bounds how long a flush waits for the other holders'
// entries of its slot: it adds at most this to a record's freshness.
const maxGatherWindow = time.Second

// gatherWindow is the hold for a commit interval: a tenth of it, at most
// maxGatherWindow.
func gatherWindow(interval time.Duration) time.Duration {
	return min(interval/10, maxGatherWindow)
}

// gather is a table loop's hold on its oldest pending entry.
type gather struct {
	id  string    // the oldest pending entry when the hold began
	due time.Time // when the hold ends
}

// hold reports until when the loop should wait before committing entries
// (zero: commit now). holders is how many nodes hold the table's
// partitions; now is the loop's clock. The hold is measured from when this
// loop first saw the oldest entry, not from its WrittenAt, which another
// node's clock stamped.
func (g *gather) hold(entries []ledger.Entry, holders int, window time.Duration, now time.Time) time.Time {
	if len(entries) == 0 || holders <= 1 || window <= 0 || len(entries) >= maxEntriesPerCommit {
		return time.Time{}
	}
	nodes := map[string]bool{}
	for _, e := range entries {
		nodes[e.Node] = true
	}
	if len(nodes) >= holders {
		return time.Time{}
	}
	if g.id != entries[0].ID {
		g.id, g.due = entries[0].ID, now.Add(window)
	}
	if !now.Before(g.due) {
		return time.Time{}
	}
	return g.due
}
