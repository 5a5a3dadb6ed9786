package source

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
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

// readerOpts are the options of the node's franz-go consumer clients
// (consumer.go): the brokers, client id, TLS and SASL of the kafka
// section, read committed with the markers kept. Fetch sizes follow the
// readers (lane.resize).
func readerOpts(cfg config.Kafka, auth kafkaAuth) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.BootstrapServers...),
		kgo.DialTimeout(10 * time.Second),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.FetchMaxWait(250 * time.Millisecond),
		// Refresh metadata on errors (a moved leader) within a second;
		// otherwise every 5 minutes (franz-go's default).
		kgo.MetadataMinAge(time.Second),
		// Client telemetry (KIP-714) keeps a gzip writer per client, about
		// 150 KiB each, which the node has no use for (kfake, like brokers
		// with a metrics plugin, subscribes every client).
		kgo.DisableClientMetrics(),
	}
	if cfg.ClientID != "" {
		opts = append(opts, kgo.ClientID(cfg.ClientID))
	}
	if auth.tls != nil {
		opts = append(opts, kgo.DialTLSConfig(auth.tls))
	}
	if auth.franz != nil {
		opts = append(opts, kgo.SASL(auth.franz))
	}
	return opts
}

// readerSASL is saslMechanism's franz-go twin; AWS_MSK_IAM is built by
// newKafkaAuth (mskiam.go), one mechanism for both libraries.
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

// laneLogger reports a lane client's warnings and errors (the errors it
// retries itself) to the onError of the readers they concern: the
// partition's when the message names one, the topic's when it names a
// topic only, every reader's otherwise (a broker that cannot be reached).
type laneLogger struct{ l *lane }

func (g laneLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (g laneLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if level > kgo.LogLevelWarn {
		return
	}
	var b strings.Builder
	b.WriteString(msg)
	topic, part := "", int32(-1)
	for i := 0; i+1 < len(keyvals); i += 2 {
		fmt.Fprintf(&b, " %v=%v", keyvals[i], keyvals[i+1])
		switch keyvals[i] {
		case "topic":
			topic, _ = keyvals[i+1].(string)
		case "partition":
			if p, ok := keyvals[i+1].(int32); ok {
				part = p
			}
		}
	}
	err := errors.New(b.String())
	if topic != "" && part >= 0 {
		g.l.mu.Lock()
		r := g.l.regs[ledger.TopicPartition{Topic: topic, Partition: part}]
		g.l.mu.Unlock()
		if r != nil && r.onError != nil {
			r.onError(err)
		}
		return
	}
	g.l.report(topic, err)
}
