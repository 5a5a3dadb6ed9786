// Package catalogsync mirrors the tables this node commits, one way, to
// external catalogs (AWS Glue, Iceberg REST catalogs): one loop per table
// and catalog, beside the commit loops and never in them, recording each
// sync in the replicated state (CatalogSynced) so a new committer resumes
// from it. A FormatCatalog mirrors only the tables written in its table
// format (Glue's Delta entries, catalog glue-delta, for tables whose
// formats name delta): its loops start when a table gains the format and
// end when it loses it, and its sync state and lag are its own.
//
// It declares what it needs where it uses it: Catalog (implemented by
// sinks/glue and sinks/restsync, which see only sink.SyncTable), State and
// Recorder (implemented by cmd/floe over cluster/). It imports ledger,
// sinks/sink and worker/internal/retry, never worker or cluster; cmd/floe
// wires it and reads its Status for the report.
//
// Lock order: Sync.mu is a leaf, held only to read or update status.
package catalogsync
