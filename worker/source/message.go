package source

import (
	"context"
	"time"

	"github.com/floe-io/floe/internal/records"
)

// PartitionReader reads one partition in order.
type PartitionReader interface {
	Read(ctx context.Context) (Message, error)
	Close() error
}

// Message is one fetched Kafka record, or a transaction's commit or abort
// marker (Control): a marker holds no record, but its offset is read, so
// the pipeline moves past it and a range may end after it.
type Message struct {
	Offset     int64
	Key, Value []byte
	Headers    []records.Header
	Time       time.Time
	Control    bool
	// HighWatermark is the partition's end as the reader sees it: the last
	// stable offset, since readers read committed.
	HighWatermark int64
}
