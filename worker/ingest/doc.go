// Package ingest runs one pipeline per table on each node: it fetches the
// node's assigned partitions of the table (one fetcher goroutine each,
// through worker/source's readers), decodes every record (JSON inference,
// raw, or Schema Registry formats through a SchemaDecoder; a JSON record
// that fits the table's columns is only checked and kept as fetched, for
// the sink to append), buffers them,
// and flushes one data file per table per flush (a large one as one per
// core, by the sink) for all of the node's partitions together, then records the files and offset ranges in the
// ledger. It also evolves the table's shape (evolve.go) and asks the
// committer to apply it (schemareq.go), suspends or pauses on bad records
// and incompatible schemas, obeys operator resumes, pauses and rewinds, and
// drains on shutdown.
//
// Files: pipeline.go (the Pipeline and its goroutine), fetch.go (the
// partition fetchers and start offsets), handle.go (one record: decode,
// route, count), burst.go (the records already queued, handled together and
// counted in status once), decode.go and jsonparse.go (JSON), predecode.go and
// jsoncheck.go (the fetchers' check of JSON records and their decoding of
// registry formats), schemadecode.go
// (registry formats), evolve.go, flush.go (flush jobs), schemareq.go,
// operate.go, resume.go, drain.go, catchup.go (the flush when a backlog's
// drain reaches the partitions' ends), rates.go (measured throughput), node.go
// (what the node's pipelines share, and the contracts they declare).
//
// It imports config, internal/jsontext, ledger, records, sinks/sink,
// status, worker/control, worker/source and worker/internal/retry; never
// worker, cluster or Raft.
// Only worker builds pipelines; cmd/floe uses DecodeJSON and FitsJSON for
// benchmarks, and the sinks' tests FitsJSON.
//
// Locks: a Pipeline has none (its goroutine owns it); counting a burst of
// records takes only its table's status lock (status.Table), once. The rates lock is a
// leaf.
package ingest
