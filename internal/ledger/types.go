package ledger

import (
	"fmt"
	"strings"
)

// TopicPartition names one Kafka partition.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) }

// Range is the half-open fetch range [From, To) of one partition that an entry
// covers. Offsets inside it that carried no record (transaction markers,
// compacted records) are still covered, so consecutive ranges always touch.
type Range struct {
	TopicPartition
	From  int64  `json:"from"`
	To    int64  `json:"to"`
	Epoch uint64 `json:"epoch"`
	// MaxTS is the newest record timestamp in the range (unix ms), for
	// the partition's time lag once committed; 0 when unknown.
	MaxTS int64 `json:"max_ts,omitempty"`
}

// FileDescriptor describes one written data file well enough to rebuild the
// table format's own data-file entry without reading the file again: path,
// size, record count, partition values and per-column statistics keyed by
// field id (bounds in Iceberg's single-value binary serialization).
//
// Partition values are in PartValues, keyed by partition field id, in
// Iceberg's single-value binary serialization (a nil value is a null): the
// table format decodes them with the partition field's type, exactly.
// Partition holds the same values as JSON gives them back (a long above
// 2^53 rounded, decimals and uuids as whatever they marshal to); it is
// still written because a node of the release before reads only it during a
// rolling upgrade, and it is read only for an entry without PartValues (one
// such node wrote).
type FileDescriptor struct {
	Path         string         `json:"path"`
	Format       string         `json:"format"`
	SpecID       int32          `json:"spec_id"`
	RecordCount  int64          `json:"records"`
	SizeBytes    int64          `json:"size"`
	Partition    map[int]any    `json:"partition,omitempty"`
	PartValues   map[int][]byte `json:"partition_values,omitempty"`
	ColumnSizes  map[int]int64  `json:"column_sizes,omitempty"`
	ValueCounts  map[int]int64  `json:"value_counts,omitempty"`
	NullCounts   map[int]int64  `json:"null_counts,omitempty"`
	NaNCounts    map[int]int64  `json:"nan_counts,omitempty"`
	LowerBounds  map[int][]byte `json:"lower_bounds,omitempty"`
	UpperBounds  map[int][]byte `json:"upper_bounds,omitempty"`
	SplitOffsets []int64        `json:"split_offsets,omitempty"`
	SortOrderID  *int           `json:"sort_order_id,omitempty"`
}

// Entry is one flush of one node for one table: the files it wrote into the
// table, the files it wrote into the table's dead-letter table, and the
// offset ranges they cover together.
type Entry struct {
	ID       string           `json:"id"`
	Node     string           `json:"node"`
	Files    []FileDescriptor `json:"files"`
	DLQFiles []FileDescriptor `json:"dlq_files,omitempty"`
	Ranges   []Range          `json:"ranges"`
	Records  int64            `json:"records"`
	DLQ      int64            `json:"dlq_records"`
	Bytes    int64            `json:"bytes"`
	// WrittenAt is stamped by the proposer (unix milliseconds): the FSM never
	// reads the clock.
	WrittenAt int64 `json:"written_at"`
	// MaxTimestamp is the newest Kafka record timestamp in the entry (unix
	// milliseconds), used to report freshness once committed.
	MaxTimestamp int64 `json:"max_ts"`
	// Tombstones, in an upsert table's entry, are the offsets (by
	// topic/partition) of the rows of Files that delete their key rather
	// than set it: the committer deletes them and the key's previous row
	// in the same commit. At most MaxTombstones offsets in all.
	Tombstones map[string][]int64 `json:"tombstones,omitempty"`
}

// MaxTombstones bounds the tombstone offsets of one entry (about 10 bytes
// each in the Raft entry): a flush of an upsert table that reaches it is
// written early.
const MaxTombstones = 10000

// TableKey is the key of a table in the replicated state and the ledger: the
// identifier's parts joined by the unit separator, which no namespace or
// table name Floe accepts can contain.
func TableKey(ident []string) string { return strings.Join(ident, "\x1f") }

// TableIdent splits a TableKey back into its parts.
func TableIdent(key string) []string { return strings.Split(key, "\x1f") }

// DisplayName renders a table key as namespace.table for people.
func DisplayName(key string) string { return strings.ReplaceAll(key, "\x1f", ".") }
