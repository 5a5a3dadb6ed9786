// Package sink holds the contract types between the worker and the table
// sinks and catalog mirrors (sinks/iceberg, sinks/glue, sinks/restsync):
// what a table is (TableSpec), what a compaction may do and what it wrote
// (CompactionPolicy, Rewrite, RewriteStats), what a catalog mirror is told
// (SyncTable) and the ErrConfig sentinel sinks wrap.
//
// It is a leaf: it imports only config and the standard library, so the
// sinks implement the worker's interfaces without importing worker, and the
// worker (which declares those interfaces where it uses them) imports the
// sinks' vocabulary from here. Anything may import it; it must never import
// worker, cluster or a sink.
package sink
