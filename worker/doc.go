// Package worker fetches Kafka partitions, decodes their records, buffers
// them per table and writes one data file per table per flush through a Sink,
// then records the files in the ledger. It also runs the committer loop of
// the tables this node commits.
//
// The worker never imports Raft: it sees the replicated state only through
// the small interfaces in interfaces.go, which cmd/ wires to cluster/.
//
// Drain (drain.go) hands a node's work over before shutdown: fetchers stop
// for good, buffers are flushed and recorded, and the tables this node
// commits commit what is pending. Rates (rates.go) reports the measured
// bytes per second per partition for throughput-balanced assignment.
// Maintenance commits carry the committer's epoch like appends (fence.go).
//
// Lock order: Worker.mu, then tablePipeline.mu, then Status.mu; the rates
// lock is a leaf. No lock is held across I/O (Kafka, object storage, Raft).
package worker
