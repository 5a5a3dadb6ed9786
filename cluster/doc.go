// Package cluster is the front door to Floe's replicated state: the names
// callers have always used (cluster.Node, cluster.State, cluster.Open,
// cluster.NewCatalog, ...) as aliases of the subpackages that do the work,
// and the shim that wires the catalog to the Raft node.
//
//   - fsm: the pure state machine: state, the append-only command enum, one
//     apply function per command, snapshots, change notification (global
//     and per table). No Raft, no I/O, no clock.
//   - raftnode: hashicorp/raft, its transport and storage, the raft.FSM
//     adapter over fsm, the internal gRPC (forwarding to the leader, join,
//     leave, transfer), the autopilot, membership and drain.
//   - catalog: the catalog of record as an iceberg-go catalog.Catalog; it
//     writes metadata files and proposes commands through catalog.Replica.
//   - recovery: the state backup to the warehouse and recovery from it
//     (--recover).
//
// The state holds, per table, the current Iceberg metadata location and the
// exactly-once ledger (see package ledger): per topic-partition the committed
// offset, and the recorded but uncommitted data files. An Iceberg commit is
// one Raft entry (CommitTables) that compare-and-swaps the metadata pointers
// it changes, advances committed offsets and removes the ledger entries it
// covers, so a table and its offsets can never disagree.
//
// Nothing under cluster/ imports this package; cmd/floe (the wiring) and
// tests may. New code may import the subpackages directly.
package cluster
