// Package worker runs a node's share of the work and wires its parts:
// discovery of topics and their routing to tables (discover.go,
// routes.go), one pipeline per mapped table (worker/ingest) handed its
// assigned partitions, resumes and controls when they change (reconcile
// in worker.go, hand.go), one commit loop per table (worker/commit),
// drain before shutdown (drain.go), resume (resume.go), maintenance on
// demand (maintain.go) and the measured rates for throughput-balanced
// assignment.
//
// The record's path: worker/source (kafka-go readers) -> worker/ingest
// (decode, buffer, flush, RecordFiles) -> replicated ledger ->
// worker/commit (Commit through the sink, maintenance) ->
// worker/catalogsync (mirrors to external catalogs, wired by cmd/floe).
// Shared small types live in leaves: worker/control (schema requests,
// operator controls), records, sinks/sink, status.
//
// The worker never imports Raft or cluster: it sees the replicated state
// only through the interfaces in interfaces.go (the union of what ingest
// and commit declare, plus what discovery needs), which cmd/ wires to
// cluster/. Subpackages never import worker. Only cmd/floe imports worker.
//
// Lock order: Worker.mu, then status.Tracker.mu, then status.Table.mu;
// Worker.reMu, commit.Committer.mu, ingest's rates lock and
// catalogsync.Sync.mu are leaves. No lock is held across I/O (Kafka,
// object storage, Raft); counting a record takes only its table's status
// lock.
package worker
