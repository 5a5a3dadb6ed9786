// Package commit runs the committer of each table this node holds the
// committer role of: one goroutine per table that commits the ledger's
// pending entries through the sink, applies schema requests and a replace
// rewind's delete, and runs the table's maintenance (snapshot expiry,
// orphan cleanup, compaction) in order with the appends, so the table has
// a single writer. The slow parts run in the background beside the loop,
// one at a time per table: a compaction's planning (its commit is made in
// the loop) and orphan cleanup (which commits nothing; the sink fences its
// deletions by a read barrier and the role), reported to status when they
// end. Every sink call that changes the table names the
// committer role the loop read, and the sink fences its commit by it; a
// refusal with ledger.ErrStaleCommitter is not a failure (fence.go).
//
// It declares what it needs where it uses it (State, Sink, Proposer in
// committer.go); worker wires it and starts one loop per mapped table. It
// imports config, ledger, records, sinks/sink, status, worker/control and
// worker/internal/retry; never worker, cluster or Raft.
//
// Files: committer.go (the Committer and its contracts), loop.go (one
// round of a table's loop, one step per job), schedule.go (when
// maintenance is due), maintain.go (expiry, orphans, compaction and
// maintenance on demand), schemas.go (applying schema requests),
// fence.go.
//
// Lock order: Committer.mu is a leaf (the maintenance channels); no lock
// is held across I/O.
package commit
