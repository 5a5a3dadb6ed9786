package source

import (
	"context"
	"time"

	"github.com/floe-io/floe/records"
)

// PartitionReader reads one partition in order.
type PartitionReader interface {
	Read(ctx context.Context) (Message, error)
	Close() error
}

// Message is one fetched Kafka record.
type Message struct {
	Offset        int64
	Key, Value    []byte
	Headers       []records.Header
	Time          time.Time
	HighWatermark int64
}
