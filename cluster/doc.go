// Package cluster owns Floe's replicated state: the hashicorp/raft group, the
// deterministic FSM and its commands, snapshots, and the catalog of record
// built on them.
//
// The state holds, per table, the current Iceberg metadata location and the
// exactly-once ledger (see package ledger): per topic-partition the committed
// offset, and the recorded but uncommitted data files. An Iceberg commit is
// one Raft entry (CommitTables) that compare-and-swaps the metadata pointers
// it changes, advances committed offsets and removes the ledger entries it
// covers, so a table and its offsets can never disagree.
//
// Commands are an append-only tagged enum (commands.go). Each type has one
// apply function; a type this binary does not know is skipped, so a node of an
// older version keeps applying the log written by a newer leader during a
// rolling upgrade. Apply never reads the clock, draws randomness or does I/O:
// proposers stamp times into the commands.
package cluster
