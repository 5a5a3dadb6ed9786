package worker

import (
	"context"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/worker/commit"
	"github.com/floe-io/floe/worker/ingest"
	"github.com/floe-io/floe/worker/source"
)

// The worker's contracts are the union of what its parts declare where they
// use them (ingest: pipelines; commit: commit loops) and what the
// orchestration here needs itself. cmd/ wires them to cluster/ and the
// sinks.

// State is the worker's read view of the replicated state. Loops that
// follow one table (a commit loop, a pipeline waiting for its schema
// request) wait on WatchTable, declared by ingest and commit; the loops
// here that follow every table wait on Watch.
type State interface {
	ingest.State
	commit.State
	// Watch returns a channel closed at the next state change, whatever
	// it changed: reconcile and drain follow assignments, mappings and
	// commits of every table.
	Watch() <-chan struct{}
	// Assigned returns the partitions assigned to node, with their epochs.
	Assigned(node string) map[ledger.TopicPartition]uint64
	// Resume returns a table's resume generation, which grows with every
	// operator resume, and the records to consume as skipped (offset by
	// partition) until the table commits past them.
	Resume(table string) (gen uint64, skips map[ledger.TopicPartition]int64)
	// Mappings returns the topic mappings made through the admin API; they
	// follow the configuration's own mappings in routing order.
	Mappings() []config.Table
}

// Proposer changes the replicated state. Errors for which ledger.Refused is
// true are final; others may be retried.
type Proposer interface {
	ingest.Proposer
	commit.Proposer
	RegisterSources(ctx context.Context, sources []Source) error
	// ResumeTable resumes a suspended or paused table on every node, past
	// the records at skips (offset by partition).
	ResumeTable(ctx context.Context, table string, skips map[ledger.TopicPartition]int64) error
}

// Source is a topic routed into a table.
type Source struct {
	Topic      string
	Table      string // table key
	Partitions int32
}

// Sink writes (ingest) and commits (commit) one table format.
type Sink interface {
	ingest.Sink
	commit.Sink
}

// Kafka is what the worker needs from the brokers: discovery lists topics,
// pipelines read partitions.
type Kafka interface {
	ingest.Kafka
	// Topics returns every topic and its partition count.
	Topics(ctx context.Context) (map[string]int32, error)
	// Health is what the partition readers saw of the brokers: which are
	// down and which partitions read here wait on them (sourcehealth.go).
	Health() source.Health
}
