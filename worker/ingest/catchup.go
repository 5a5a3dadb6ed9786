package ingest

import "context"

// A pipeline that flushes because its buffer reached the target file size
// or the memory budget asked for room, while its partitions still hold
// more than half that flush's records beyond what it has read, is
// draining a backlog (a start from earliest, a node back from an outage, a
// partition moved here). The records read after its last such flush would
// otherwise wait for the commit-interval tick, up to a whole interval after
// the pipeline has caught up with the topic. So it flushes them as soon as
// every partition it fetches has reached the end its reader last saw, once
// per backlog: steady flow, at any rate, is still flushed on the tick, and
// makes no extra small files.
//
// A table flushed by size at a steady high rate is not draining a backlog:
// when its buffer fills, its readers are within a fetch of the partitions'
// ends, far less than half a file behind.

// noteFlushForSpace is called before a flush made for size or for the
// budget, with the number of records it flushes: it marks the pipeline as
// draining a backlog when its partitions are more than half as many
// records again behind their ends.
func (p *Pipeline) noteFlushForSpace(flushing int) {
	if p.backlog || flushing == 0 {
		return
	}
	if p.lag() > int64(flushing)/2 {
		p.backlog = true
	}
}

// lag is how many offsets the pipeline's partitions are behind the ends
// their readers last saw (markers and aborted records included: an
// estimate of records, good enough to tell a backlog from steady flow).
func (p *Pipeline) lag() int64 {
	var n int64
	for _, ps := range p.parts {
		if !ps.stopped && ps.hw > ps.next {
			n += ps.hw - ps.next
		}
	}
	return n
}

// caughtUp flushes the buffer of a pipeline draining a backlog once the
// record just handled (of partition ps) leaves every fetched partition at
// the end its reader saw. It scans the partitions only when ps itself is
// at its end, and stops at the first one that is not.
func (p *Pipeline) caughtUp(ctx context.Context, ps *partState) {
	if !p.backlog || !p.atEnds(ps) {
		return
	}
	p.backlog = false
	if !p.pending() {
		return // the last flush for space took everything
	}
	p.log.Debug("caught up with the partitions' ends after a backlog; flushing now", "records", len(p.buf))
	p.flush(ctx, false)
}

// atEnds reports whether every partition the pipeline fetches is at the
// end its reader last saw; ps, the partition of the record just handled,
// is checked first, so that the scan runs only when it is.
func (p *Pipeline) atEnds(ps *partState) bool {
	if ps.next < ps.hw {
		return false
	}
	for _, q := range p.parts {
		if !q.stopped && q.next < q.hw {
			return false
		}
	}
	return true
}

// pending reports whether the pipeline has read records it has not yet
// handed to a flush.
func (p *Pipeline) pending() bool {
	for _, ps := range p.parts {
		if ps.next > ps.from {
			return true
		}
	}
	return false
}
