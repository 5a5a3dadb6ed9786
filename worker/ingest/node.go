package ingest

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/membudget"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/control"
	"github.com/floe-io/floe/worker/source"
)

// Kafka is what pipelines need from the brokers.
type Kafka interface {
	// Offsets returns the earliest or latest offset of partitions of a topic.
	Offsets(ctx context.Context, topic string, partitions []int32, latest bool) (map[int32]int64, error)
	// NewReader starts reading one partition at offset, fetching at most
	// fetchBytes per request (the budget's share for the partition). Reader
	// errors that the client retries internally are reported to onError so
	// they show in status.
	NewReader(tp ledger.TopicPartition, offset int64, fetchBytes int32, onError func(error)) source.PartitionReader
}

// State is the replicated state a pipeline reads.
type State interface {
	// Position returns where a partition stands in a table.
	Position(table string, tp ledger.TopicPartition) (ledger.Offsets, bool)
	// SchemaRequests returns a table's pending schema requests, oldest first.
	SchemaRequests(table string) []control.SchemaRequest
	// Pending returns a table's recorded, uncommitted ledger entries.
	Pending(table string) []ledger.Entry
	// WatchTable returns a channel closed at the next state change that
	// may concern table key (its ledger, schema requests, controls).
	WatchTable(key string) <-chan struct{}
}

// Proposer records what a pipeline wrote. Errors for which ledger.Refused
// is true are final; others may be retried.
type Proposer interface {
	RecordFiles(ctx context.Context, table string, e ledger.Entry) error
	// RequestSchema records a schema request for the table's committer
	// (idempotent by id).
	RequestSchema(ctx context.Context, table string, req control.SchemaRequest) error
}

// Sink writes a table's data files.
type Sink interface {
	// Shape returns the payload shape of an existing table (all fields
	// committed), or nil when the table does not exist yet.
	Shape(ctx context.Context, t sink.TableSpec) (*records.Shape, error)
	// Prepare creates the table if needed, adds the shape's uncommitted
	// fields as columns and brings the partition spec in line with the
	// mapping.
	Prepare(ctx context.Context, t sink.TableSpec, shape *records.Shape) error
	// Write writes records into one data file (more only past the target
	// size) and describes them. Nothing is committed.
	Write(ctx context.Context, t sink.TableSpec, id string, recs []*records.Record) ([]ledger.FileDescriptor, error)
	// WriteDLQ writes dead-letter records into the table's dead-letter table.
	WriteDLQ(ctx context.Context, t sink.TableSpec, id string, recs []*records.Record) ([]ledger.FileDescriptor, error)
}

// SchemaDecoder decodes records of the Schema Registry formats (avro,
// protobuf, json_schema, latest). Errors wrapping records.ErrBadRecord mean
// the record is at fault (wrong magic byte, unknown schema id, truncated or
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

// DeadLetterProducer writes dead letters to a Kafka topic, besides the
// dead-letter table (error mode log with dead_letter_topic set).
type DeadLetterProducer interface {
	Produce(ctx context.Context, topic string, recs []*records.Record) error
}

// Config is what pipelines need of the node's configuration; worker.Config
// documents each field and sets the defaults.
type Config struct {
	NodeID         string
	CommitInterval time.Duration
	TargetFileSize config.ByteSize
	// Memory is the node's memory_budget split (internal/membudget): the
	// records' share bounds what the pipelines hold, the fetch share sizes
	// each partition's fetch. The node holds the Kafka client's queues to
	// the fetch share itself.
	Memory           membudget.Split
	ReaderErrorGrace time.Duration
	// MaxPending caps a table's pending ledger entries: a flush waits to
	// record while the table has that many (0: DefaultMaxPending).
	MaxPending int
	// MaxNestingDepth and MaxColumns: the limits of a table whose mapping
	// sets none (0: records.DefaultMaxNestingDepth, DefaultMaxColumns).
	MaxNestingDepth, MaxColumns int
}

// Deps are the dependencies every pipeline of a node uses.
type Deps struct {
	Config   Config
	Kafka    Kafka
	State    State
	Proposer Proposer
	Sink     Sink
	Status   *status.Tracker
	Log      *slog.Logger
}

// Node is what every pipeline of a node shares: the dependencies, the
// memory the pipelines buffer together, the measured rates and the drain.
type Node struct {
	Deps
	// Set before the first pipeline starts, or never (nil: none configured).
	Schemas     SchemaDecoder      // Schema Registry formats
	DeadLetters DeadLetterProducer // dead-letter topics

	mem   *budget // the node's memory budget (budget.go)
	rates *rates  // bytes per second fetched per partition

	// pipes are the running pipelines, which the budget asks to flush;
	// partitions counts the partitions they fetch, which the fetch size
	// is derived from (pressure.go).
	pipesMu    sync.Mutex
	pipes      map[*Pipeline]struct{}
	partitions atomic.Int64
	// pipelines counts the pipelines made and not yet ended, which sizes
	// a new one's queue (inQueueSize).
	pipelines atomic.Int64

	// Drain: draining is set first so no pipeline starts a fetcher once
	// Drain has begun, then drainCh is closed to make every pipeline stop
	// its fetchers and flush what it buffered.
	draining  atomic.Bool
	drainCh   chan struct{}
	drainOnce sync.Once
}

// NewNode returns what the pipelines of a node share.
func NewNode(d Deps) *Node {
	n := &Node{Deps: d, rates: newRates(rateHalfLife, time.Now), drainCh: make(chan struct{}), pipes: map[*Pipeline]struct{}{}}
	n.mem = newBudget(d.Config.Memory.Records, n.press)
	return n
}

// Drain makes every pipeline stop fetching for good and flush what it
// buffered; each pipeline's Drained closes once it has. Safe to call more
// than once.
func (n *Node) Drain() {
	n.draining.Store(true)
	n.drainOnce.Do(func() {
		n.Log.Info("draining: stopping fetchers and flushing buffered records")
		close(n.drainCh)
	})
}

// Rates returns the measured bytes per second fetched per partition.
func (n *Node) Rates() map[ledger.TopicPartition]float64 { return n.rates.snapshot() }
