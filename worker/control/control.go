package control

import (
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
)

// SchemaRequest is a pipeline's request that the table's committer evolve
// the table to hold Shape (its uncommitted fields): worker/ingest makes it,
// worker/commit applies it.
type SchemaRequest struct {
	ID    string
	Node  string
	Shape *records.Shape
	Err   string // the committer's last failure to apply it
}

// TableControl is an operator's replicated control of a table, as set
// through the admin API.
type TableControl struct {
	// Paused: ingestion stops on every node until a resume.
	Paused bool
	// RewindGen grows with every rewind of the table: a pipeline that sees
	// it grow drops what it buffered and restarts every partition from the
	// ledger's end, where the rewind put it.
	RewindGen uint64
	// ReplaceFrom, set while a replace rewind's delete is owed, holds the
	// offsets from which the committer deletes rows before committing
	// anything else.
	ReplaceFrom map[ledger.TopicPartition]int64
}
