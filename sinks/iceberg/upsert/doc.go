// Package upsert keeps an Iceberg upsert table's rows one per key: it
// plans, for each commit, the position deletes that retire the rows the
// commit's rows replace, and it keeps the key index that makes that plan
// cheap.
//
// A table is an upsert table when its properties say so (PropMode =
// Mode, PropKey = the key fields, or the Kafka record key when empty);
// Of reads that. The sink (sinks/iceberg) calls Keeper.Plan before a
// commit and Keeper.Record after it; WriteDeletes turns the plan into
// position-delete files, one per partition, that the commit adds with its
// data files. Within a commit the row with the higher offset wins per
// partition and key; a key's previous live row is deleted; a tombstone
// deletes its own row as well, so readers see the key gone.
//
// The Index is a bbolt file on the node's data dir: per table and Kafka
// partition, key -> (data file, row position, offset) of the key's live
// row, stamped with the snapshot it reflects. It costs disk, not memory,
// per key. It is a cache of the table, never the truth: when its stamp
// is not the table's current snapshot (another node committed, a
// compaction rewrote files, the file was lost) Keeper drops the table's
// part and rebuilds it from the table's live data and delete files
// (rebuild.go), so a node that takes over a committer needs nothing from
// the node that left. A rebuild that finds two live rows of one key
// deletes the older in the next commit.
//
// The package knows Floe's ledger entries and the sink contract's
// columns and statistics; it holds no sink state and never touches Raft.
package upsert
