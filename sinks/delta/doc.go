// Package delta writes the Delta Lake transaction log of a table whose
// Parquet data files Floe already wrote (for Iceberg, through sinks/iceberg),
// so one set of files is read as an Iceberg table and as a Delta table.
// No Go Delta library is served here; the log is written from the protocol
// (the Delta Transaction Log Protocol, shared/specs/delta-protocol.md).
//
// Input shapes are Floe's own: data files are ledger.FileDescriptor (path,
// size, record count, Iceberg partition values and column bounds keyed by
// field id) and the table's columns are its Iceberg schema and partition
// specs (iceberg-go). The package maps them to Delta actions: protocol,
// metaData (schemaString, partitionColumns), add, remove, txn and
// commitInfo. docs/formats.md documents the type mapping, the protocol
// versions and features and what becomes of non-identity partitions.
//
// A commit is one file _delta_log/NNNNNNNNNNNNNNNNNNNN.json created with
// put-if-absent (Store.PutIfAbsent: a hard link over a written temporary
// file locally, If-None-Match: * on S3), so two writers of one version
// never both win: the loser gets ErrVersionExists. Every commit that moves
// offsets carries a txn action (appId = the table's stable id, version =
// the commit sequence) and commitInfo with floe.offsets and floe.commit-id.
// Opening a Log reads the log's tail (_last_checkpoint, the newest classic
// checkpoint, then the JSON versions after it), so a process that crashed
// after writing NNN.json and before recording it elsewhere learns, from the
// txn action, that the sequence is published: publishing it again is a
// no-op that returns the version, and a different commit under the same
// sequence is refused with a *SequenceConflictError naming what the log
// holds. A sequence is never skipped (ErrSequenceGap).
//
// Every checkpoint_interval versions (default 10) the writer adds a classic
// Parquet checkpoint (arrow-go) and _last_checkpoint.
//
// An upsert table's deleted rows are deletion vectors, written into one
// DV file per version (deletion_vector_<uuid>.bin at the table root, put
// before the version is published) and listed by Log.Referenced so that
// orphan cleanup spares them; inline DVs of older logs are read too.
//
// Follower (follow.go, follow_maint.go, follow_dlq.go) is the Iceberg
// sink's follower format (sinks/iceberg.Follower): the sink calls it where
// a second log must see a commit (an append before its replicated entry,
// a compaction, a replace delete, orphan cleanup, the dead-letter table's
// mirror) and passes the table as a sink.FollowedTable, so neither format
// imports the other: they meet in the contract, sinks/sink, and the node
// wires them.
//
// The package imports neither Raft nor the worker: the committer calls it
// and records the version it returns.
package delta
