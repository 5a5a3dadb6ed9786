// Package sink holds the contract types between the worker and the table
// sinks and catalog mirrors (sinks/iceberg, sinks/glue, sinks/restsync):
// what a table is (TableSpec), what a compaction may do and what it wrote
// (CompactionPolicy, Rewrite, RewriteStats), what a catalog mirror is told
// (SyncTable) and the ErrConfig sentinel sinks wrap; and what passes
// between the Iceberg sink and a follower format written over the same
// files (follower.go: FollowedTable, FollowedAppend, FollowerConflict),
// so sinks/iceberg and sinks/delta meet here without importing each other.
//
// It is a leaf: it imports only config, ledger, records, iceberg-go's
// table types and the standard library, so the
// sinks implement the worker's interfaces without importing worker, and the
// worker (which declares those interfaces where it uses them) imports the
// sinks' vocabulary from here. Anything may import it; it must never import
// worker, cluster or a sink.
package sink
