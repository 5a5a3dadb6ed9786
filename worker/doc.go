// Package worker fetches Kafka partitions, decodes their records, buffers
// them per table and writes one data file per table per flush through a Sink,
// then records the files in the ledger. It also runs the committer loop of
// the tables this node commits.
//
// The worker never imports Raft: it sees the replicated state only through
// the small interfaces in interfaces.go, which cmd/ wires to cluster/.
//
// Lock order: Worker.mu, then tablePipeline.mu, then Status.mu. No lock is
// held across I/O (Kafka, object storage, Raft).
package worker
