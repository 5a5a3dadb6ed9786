// Package iceberg is Floe's Apache Iceberg table sink: it maps decoded
// records to Iceberg schemas, writes Parquet data files with iceberg-go's
// table.WriteRecords, describes them for the ledger, and commits ledger
// entries as append snapshots through the catalog of record.
//
// Every snapshot it commits carries floe.offsets (the next offset of every
// partition the table holds), floe.commit-id and floe.entries in its summary,
// so a table alone says where it stands.
//
// Every commit a committer makes (appends, a rewind's delete, schema
// changes, expiry, compaction) runs under a ledger.CommitRequest naming
// that committer, bound to the catalog through Binder (the catalog of
// record's Bind): the replicated state refuses it when the role moved. The
// sink gets the role as an argument, never from the context. A pipeline's
// Prepare (creating the table, aligning its partition spec) commits
// unbound, ordered by the catalog's compare-and-swap alone.
package iceberg
