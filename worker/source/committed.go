package source

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/ledger"
	"github.com/floe-io/floe/records"
)

// Partitions are read committed with franz-go, not kafka-go: kafka-go
// v0.4.51 sends the isolation level but filters nothing, so its reader
// returns the records of aborted transactions and the commit and abort
// markers as if they were data (segmentio/kafka-go#1332). franz-go drops
// aborted records, as the Java consumer does, and marks the markers
// (Message.Control), so the offsets a reader returns have gaps where Kafka
// has aborted records. The pipeline's ranges cover them: a range starts at
// the ledger's end and ends past the last record or marker read, so a
// partition whose last write was a transaction is not left one marker
// short of its end.

// readerOpts are the franz-go options every partition reader shares: the
// brokers, client id, TLS and SASL of the kafka section, read committed
// with the markers kept. Fetch sizes are per reader (newCommittedReader).
func readerOpts(cfg config.Kafka) ([]kgo.Opt, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.BootstrapServers...),
		kgo.DialTimeout(10 * time.Second),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.FetchMaxWait(250 * time.Millisecond),
		// Each reader is its own client: refresh metadata on errors (a
		// moved leader) within a second, but not every few seconds per
		// partition otherwise (franz-go's default, 5 minutes).
		kgo.MetadataMinAge(time.Second),
		// Client telemetry (KIP-714) keeps a gzip writer per client, about
		// 150 KiB each: with a client per partition it was the largest
		// part of an idle node's heap under `floe bench --memory` (kfake,
		// like brokers with a metrics plugin, subscribes every client).
		kgo.DisableClientMetrics(),
	}
	if cfg.ClientID != "" {
		opts = append(opts, kgo.ClientID(cfg.ClientID))
	}
	tlsCfg, err := tlsConfig(cfg.TLS)
	if err != nil {
		return nil, err
	}
	if tlsCfg != nil {
		opts = append(opts, kgo.DialTLSConfig(tlsCfg))
	}
	mech, err := readerSASL(cfg.SASL)
	if err != nil {
		return nil, err
	}
	if mech != nil {
		opts = append(opts, kgo.SASL(mech))
	}
	return opts, nil
}

// readerSASL is saslMechanism's franz-go twin.
func readerSASL(c config.SASL) (sasl.Mechanism, error) {
	switch strings.ToUpper(c.Mechanism) {
	case "":
		return nil, nil
	case "PLAIN":
		return plain.Auth{User: c.Username, Pass: c.Password}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: c.Username, Pass: c.Password}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: c.Username, Pass: c.Password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("kafka.sasl: unsupported mechanism %q", c.Mechanism)
}

// newCommittedReader reads one partition from offset, read committed,
// fetchBytes at most a fetch (the node's memory budget share of the
// partition). A client buffers one fetch while the reader hands out the
// previous one, so a partition holds about twice fetchBytes outside the
// budget's count.
func newCommittedReader(opts []kgo.Opt, tp ledger.TopicPartition, offset int64, fetchBytes int32, onError func(error)) PartitionReader {
	opts = append(append([]kgo.Opt(nil), opts...),
		kgo.FetchMaxBytes(fetchBytes),
		kgo.FetchMaxPartitionBytes(fetchBytes),
		kgo.MaxConcurrentFetches(1),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{tp.Topic: {tp.Partition: kgo.NewOffset().At(offset)}}),
		kgo.WithLogger(errorLogger(onError)))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return failedReader{fmt.Errorf("reading %s: %w", tp, err)}
	}
	return &committedReader{cl: cl, onError: onError}
}

// committedReader hands out the records of its partition's fetches one by
// one. Its high watermark is the last stable offset: a read-committed
// reader sees nothing past it, so lag is measured against it.
type committedReader struct {
	cl      *kgo.Client
	buf     []*kgo.Record
	end     int64
	onError func(error)
}

func (r *committedReader) Read(ctx context.Context) (Message, error) {
	for len(r.buf) == 0 {
		fs := r.cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return Message{}, err
		}
		var errs []error
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if p.Err != nil {
				errs = append(errs, fmt.Errorf("fetching %s/%d: %w", p.Topic, p.Partition, p.Err))
			}
			if end := p.LastStableOffset; end > 0 {
				r.end = end
			} else if p.HighWatermark > 0 {
				r.end = p.HighWatermark
			}
			r.buf = append(r.buf, p.Records...)
		})
		if len(r.buf) == 0 && len(errs) > 0 {
			err := errors.Join(errs...)
			if r.onError != nil {
				r.onError(err)
			}
			return Message{}, err
		}
	}
	m := r.buf[0]
	r.buf[0] = nil
	r.buf = r.buf[1:]
	if m.Attrs.IsControl() {
		return Message{Offset: m.Offset, Control: true, HighWatermark: r.end}, nil
	}
	hs := make([]records.Header, len(m.Headers))
	for i, h := range m.Headers {
		hs[i] = records.Header{Key: h.Key, Value: h.Value}
	}
	return Message{Offset: m.Offset, Key: m.Key, Value: m.Value, Headers: hs, Time: m.Timestamp, HighWatermark: r.end}, nil
}

func (r *committedReader) Close() error { r.cl.Close(); return nil }

// failedReader is a reader whose client could not be built.
type failedReader struct{ err error }

func (f failedReader) Read(context.Context) (Message, error) { return Message{}, f.err }
func (f failedReader) Close() error                          { return nil }

// errorLogger reports franz-go's warnings and errors (the errors it
// retries itself, like kafka-go's ErrorLogger did) to onError.
type errorLogger func(error)

func (l errorLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (l errorLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if l == nil || level > kgo.LogLevelWarn {
		return
	}
	var b strings.Builder
	b.WriteString(msg)
	for i := 0; i+1 < len(keyvals); i += 2 {
		fmt.Fprintf(&b, " %v=%v", keyvals[i], keyvals[i+1])
	}
	l(errors.New(b.String()))
}
