package worker

import (
	"context"
	"time"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/ledger"
	"github.com/floe-io/floe/records"
	"github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/control"
	"github.com/floe-io/floe/worker/source"
)

// State is the worker's read view of the replicated state.
type State interface {
	// Position returns where a partition stands in a table.
	Position(table string, tp ledger.TopicPartition) (ledger.Offsets, bool)
	// Assigned returns the partitions assigned to node, with their epochs.
	Assigned(node string) map[ledger.TopicPartition]uint64
	// Pending returns a table's recorded, uncommitted entries, oldest first.
	Pending(table string) []ledger.Entry
	// Committer returns the holder of a table's committer role.
	Committer(table string) (ledger.Assignment, bool)
	// Resume returns a table's resume generation, which grows with every
	// operator resume, and the records to consume as skipped (offset by
	// partition) until the table commits past them.
	Resume(table string) (gen uint64, skips map[ledger.TopicPartition]int64)
	// SchemaRequests returns a table's pending schema requests, oldest first.
	SchemaRequests(table string) []control.SchemaRequest
	// Control returns an operator's replicated control of a table: pause
	// and rewind (see operate.go).
	Control(table string) control.TableControl
	// Mappings returns the topic mappings made through the admin API; they
	// follow the configuration's own mappings in routing order.
	Mappings() []config.Table
	// Watch returns a channel closed at the next state change.
	Watch() <-chan struct{}
}

// Proposer changes the replicated state. Errors for which ledger.Refused is
// true are final; others may be retried.
type Proposer interface {
	RecordFiles(ctx context.Context, table string, e ledger.Entry) error
	RegisterSources(ctx context.Context, sources []Source) error
	// ResumeTable resumes a suspended or paused table on every node, past
	// the records at skips (offset by partition).
	ResumeTable(ctx context.Context, table string, skips map[ledger.TopicPartition]int64) error
	// RequestSchema records a schema request for the table's committer
	// (idempotent by id).
	RequestSchema(ctx context.Context, table string, req control.SchemaRequest) error
	// SchemaApplied answers schema requests: applied (errMsg empty, they go)
	// or failed (they stay, carrying errMsg). Fenced by committer.
	SchemaApplied(ctx context.Context, table string, ids []string, errMsg string, committer ledger.Assignment) error
}

// Source is a topic routed into a table.
type Source struct {
	Topic      string
	Table      string // table key
	Partitions int32
}

// Sink writes and commits one table format.
type Sink interface {
	// Shape returns the payload shape of an existing table (all fields
	// committed), or nil when the table does not exist yet.
	Shape(ctx context.Context, t sink.TableSpec) (*records.Shape, error)
	// Prepare creates the table if needed, adds the shape's uncommitted
	// fields as columns and brings the partition spec in line with the
	// mapping (fields on columns that do not exist yet wait for them).
	Prepare(ctx context.Context, t sink.TableSpec, shape *records.Shape) error
	// Write writes records into one data file (more only past the target
	// size) and describes them. Nothing is committed.
	Write(ctx context.Context, t sink.TableSpec, id string, recs []*records.Record) ([]ledger.FileDescriptor, error)
	// WriteDLQ writes dead-letter records into the table's dead-letter table.
	WriteDLQ(ctx context.Context, t sink.TableSpec, id string, recs []*records.Record) ([]ledger.FileDescriptor, error)
	// Commit commits ledger entries (oldest first) into the table and its
	// dead-letter table as one catalog commit, fenced by committer.
	Commit(ctx context.Context, table string, entries []ledger.Entry, committer ledger.Assignment, at time.Time) error
	// Expire removes snapshots older than maxAge or beyond the newest
	// maxCount, whichever is stricter, never the current one; it returns
	// how many went.
	Expire(ctx context.Context, table string, maxAge time.Duration, maxCount int, now time.Time) (int, error)
	// CleanOrphans deletes unreferenced files older than minAge under the
	// table (and its dead-letter table), sparing those keep names.
	CleanOrphans(ctx context.Context, table string, minAge time.Duration, keep map[string]bool) (int, int64, error)
	// PlanRewrite plans compaction of small files and writes the compacted
	// files, committing nothing; it may take long and runs in the background.
	PlanRewrite(ctx context.Context, table string, p sink.CompactionPolicy) (sink.Rewrite, error)
	// CommitRewrite commits a planned rewrite on top of the latest snapshot,
	// in order with appends (the commit loop calls it).
	CommitRewrite(ctx context.Context, table string, rw sink.Rewrite) error
	// DeleteFrom deletes the table's rows at or after the given offsets of
	// their partitions, as the replace delete of rewind gen, fenced by
	// committer; it returns how many rows went.
	DeleteFrom(ctx context.Context, table string, from map[ledger.TopicPartition]int64, gen uint64, committer ledger.Assignment, at time.Time) (int64, error)
}

// Kafka is what the worker needs from the brokers besides fetching.
type Kafka interface {
	// Topics returns every topic and its partition count.
	Topics(ctx context.Context) (map[string]int32, error)
	// Offsets returns the earliest or latest offset of partitions of a topic.
	Offsets(ctx context.Context, topic string, partitions []int32, latest bool) (map[int32]int64, error)
	// NewReader starts reading one partition at offset.
	// Reader errors that kafka-go retries internally are reported to
	// onError so they show in status.
	NewReader(tp ledger.TopicPartition, offset int64, onError func(error)) source.PartitionReader
}

// SchemaDecoder decodes records of the Schema Registry formats (avro,
// protobuf, json_schema, latest). Errors wrapping records.ErrBadRecord mean the
// record is at fault (wrong magic byte, unknown schema id, truncated or
// invalid payload) and go where the error mode says; any other error (the
// registry unreachable or slow) is transient: the pipeline holds the record,
// retries with backoff and shows the table DEGRADED.
type SchemaDecoder interface {
	// Value decodes a record value. subject is the value subject, used by
	// the latest format.
	Value(ctx context.Context, format, subject string, data []byte) (records.Decoded, error)
	// Key decodes a key that carries a schema id the registry knows; ok is
	// false for any other key, which stays bytes only.
	Key(ctx context.Context, data []byte) (d records.Decoded, ok bool, err error)
}
