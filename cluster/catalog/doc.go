// Package catalog is Floe's catalog of record: an iceberg-go
// catalog.Catalog whose table pointers live in the replicated state.
// CommitTable validates a transaction's requirements, writes the new
// metadata file and proposes one CommitTables entry.
//
// A committer's commits are fenced explicitly (bind.go): Bind(req) binds a
// ledger.CommitRequest to a session with two table.CatalogIO views. Tables
// loaded through them commit as req's committer: through stage, the swap
// is held (the dead-letter table); through apply, every held swap, its own
// and req's ledger commit become one CommitTables entry, which the FSM
// refuses with ledger.ErrStaleCommitter when the committer's epoch is not
// current. A request without a committer is refused (ErrNoCommitter).
// Without a session, CommitTable swaps the one pointer, fenced by nothing
// but the compare-and-swap (table creation, spec alignment, REST).
//
// It does I/O (metadata files) but never sees Raft: it reads the state and
// proposes commands through Replica, which the wiring (package node,
// node.NewCatalog) implements over a raftnode.Node. It imports fsm and
// ledger, never raftnode or recovery; recovery, node and tests may import it.
//
// Lock order: Catalog.mu guards only the metadata cache; it is never held
// across I/O or proposals.
package catalog
