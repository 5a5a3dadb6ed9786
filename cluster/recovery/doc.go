// Package recovery keeps Floe recoverable from total loss (every Raft disk
// gone at once): the leader's periodic state backup to
// <warehouse>/_floe/state/latest.json (backup.go, the snapshot envelope of
// package fsm), and Recover for floe serve --recover, which takes the
// backup's catalog and walks each table forward to its newest committed
// metadata file (walk.go) to compute the state a new cluster starts from,
// proposed as one RestoreState command.
//
// It reads the state through fsm.FSM and does storage I/O through
// iceberg-go; it imports fsm, catalog (metadata file names) and ledger,
// never raftnode. Package node and tests may import it.
package recovery
