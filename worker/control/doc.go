// Package control holds the replicated requests and controls of a table
// that its pipelines and its committer act on: schema requests (a pipeline
// asks, the committer applies) and an operator's pause and rewind.
//
// It is a leaf (ledger and records only), shared by worker, worker/ingest,
// worker/commit and cmd/floe, which reads them from the replicated state.
package control
