// Package ledger holds the exactly-once bookkeeping that every Floe table
// relies on, as pure data and pure functions with no I/O, clock or Raft.
//
// A worker writes a data file, then records a descriptor of it (path, size,
// record count, column statistics, partition values) together with the Kafka
// offset ranges it covers. The ledger accepts such an entry only when, for
// every topic-partition it covers, the entry comes from the partition's
// current assignment epoch and its first offset equals the ledger's end for
// that partition: no gap and no overlap. A commit later removes the oldest
// entries of a table and advances each partition's committed offset to the
// end of the ranges it removed.
//
// cluster/ embeds a Ledger in its replicated state and applies these rules
// inside the Raft FSM; worker/ and sinks/ only use the types. Keeping the rules
// here, apart from Raft, lets them be property-tested directly.
package ledger
