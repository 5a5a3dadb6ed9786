// Package iceberg is Floe's Apache Iceberg table sink: it maps decoded
// records to Iceberg schemas, writes Parquet data files with iceberg-go's
// table.WriteRecords (building the Arrow batches from decoded values, or
// straight from a JSON record's bytes: jsonrow.go; a large flush of an
// unpartitioned table as one file per core: writeparts.go), describes them
// for the ledger, and commits ledger entries as append snapshots through
// the catalog of record.
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
//
// Deleting files commits nothing, so no catalog commit can fence it: orphan
// cleanup is fenced through Fence (fence.go), which the node wires over its
// Raft node. After listing candidates and before the first deletion, a
// read barrier proves this node's state current, the committer role is
// re-checked in it, and the candidates are re-checked against the current
// metadata and pending ledger entries; otherwise nothing is deleted
// (ErrUnfenced, ledger.ErrStaleCommitter). Expiry and compaction planning
// pass the same barrier before reading metadata, so a node catching up
// does not read metadata files that later commits deleted.
//
// A second table format over the same data files is a Follower
// (follower.go, followpublish.go), declared here and wired by the node:
// Delta Lake's log (sinks/delta.Follower) for a table whose formats name
// delta. An append's follower version is published before the commit
// entry that records it, and one already in the log is adopted; its
// dead-letter table's log mirrors that table's committed state after the
// commit instead. The follower reads tables through sink.FollowedTable,
// never this package's internals.
//
// An upsert table's commit (upsert.go) asks sinks/iceberg/upsert for the
// position deletes that retire the rows it replaces and adds them to the
// same snapshot; compaction drops rows deleted that way (upsertcompact.go).
package iceberg
