// Package catalog is Floe's catalog of record: an iceberg-go
// catalog.Catalog whose table pointers live in the replicated state.
// CommitTable validates a transaction's requirements, writes the new
// metadata file and proposes one CommitTables entry (or stages the swap for
// a table committed together with its dead-letter table).
//
// It does I/O (metadata files) but never sees Raft: it reads the state and
// proposes commands through Replica, which the wiring (package node,
// node.NewCatalog) implements over a raftnode.Node. It imports fsm and
// ledger, never raftnode or recovery; recovery, node and tests may import it.
//
// Lock order: Catalog.mu guards only the metadata cache; it is never held
// across I/O or proposals.
package catalog
