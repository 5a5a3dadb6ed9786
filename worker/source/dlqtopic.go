package source

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/records"
)

// Headers Floe adds to a dead letter it writes to a topic.
const (
	HeaderError     = "floe.error"
	HeaderTopic     = "floe.source.topic"
	HeaderPartition = "floe.source.partition"
	HeaderOffset    = "floe.source.offset"
)

// DeadLetterWriter writes dead letters to Kafka topics with kafka-go; it
// implements the worker's DeadLetterProducer.
type DeadLetterWriter struct {
	w *kafka.Writer
}

// NewDeadLetterWriter writes to the brokers of the kafka section, with its
// TLS and SASL settings; every write waits for all in-sync replicas.
func NewDeadLetterWriter(cfg config.Kafka) (*DeadLetterWriter, error) {
	transport, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	return &DeadLetterWriter{w: &kafka.Writer{
		Addr: kafka.TCP(cfg.BootstrapServers...), Transport: transport, Balancer: &kafka.Hash{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: 10 * time.Millisecond, MaxAttempts: 3,
	}}, nil
}

// Produce writes dead letters to topic: each record with its key, raw
// value and headers, plus headers saying where it came from and why it
// could not be decoded.
func (d *DeadLetterWriter) Produce(ctx context.Context, topic string, recs []*records.Record) error {
	msgs := make([]kafka.Message, 0, len(recs))
	for _, r := range recs {
		m := kafka.Message{Topic: topic, Key: r.Key, Value: r.Raw, Time: r.Timestamp}
		for _, h := range r.Headers {
			m.Headers = append(m.Headers, kafka.Header{Key: h.Key, Value: h.Value})
		}
		m.Headers = append(m.Headers,
			kafka.Header{Key: HeaderError, Value: []byte(r.Err)},
			kafka.Header{Key: HeaderTopic, Value: []byte(r.Topic)},
			kafka.Header{Key: HeaderPartition, Value: []byte(strconv.Itoa(int(r.Partition)))},
			kafka.Header{Key: HeaderOffset, Value: []byte(strconv.FormatInt(r.Offset, 10))},
		)
		msgs = append(msgs, m)
	}
	if err := d.w.WriteMessages(ctx, msgs...); err != nil {
		return fmt.Errorf("writing %d dead letters to topic %s: %w", len(msgs), topic, err)
	}
	return nil
}

// Close flushes and closes the writer.
func (d *DeadLetterWriter) Close() error { return d.w.Close() }
