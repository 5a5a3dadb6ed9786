// Package fsm is Floe's replicated state machine, without Raft: the State,
// the commands (an append-only tagged enum: a type byte, then JSON), one
// apply function per command registered in one static table (table.go),
// versioned snapshots, and change notification.
//
// It is pure and deterministic: the same entries give the same state on
// every node. Apply never reads the clock, draws randomness or does I/O;
// proposers stamp times into the commands. Version gating (version.go): a
// command of a type this build does not know is skipped and counted when
// its type byte carries IgnorableFlag; without it the FSM halts (upgrade
// required) rather than diverge. Proposers refuse a command until every
// registered member's protocol level reaches the command's (Gate). Refusals use
// this package's sentinels; those that callers know as iceberg-go's
// (ErrNoSuchTable, ErrCommitFailed, ...) are paired with them by the Raft
// adapter in package raftnode.
//
// Readers call FSM.Read. Loops that follow one table wait on
// FSM.WatchTable(key); FSM.Watch wakes at every entry and is for the few
// that need every change (assignment, membership, WaitApplied).
//
// It imports only the standard library, ledger and config (Mapping embeds
// config.Table); cluster/imports_test.go enforces that. Anything may import
// it.
//
// The state holds, per table, the current Iceberg metadata location and the
// exactly-once ledger (see package ledger): per topic-partition the committed
// offset, and the recorded but uncommitted data files. An Iceberg commit is
// one Raft entry (CommitTables) that compare-and-swaps the metadata pointers
// it changes, advances committed offsets and removes the ledger entries it
// covers, so a table and its offsets can never disagree.
package fsm
