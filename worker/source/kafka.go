package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
	franzsasl "github.com/twmb/franz-go/pkg/sasl"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
)

// KafkaClient reads Kafka with segmentio/kafka-go; it implements the
// worker's Kafka.
type KafkaClient struct {
	brokers []string
	client  *kafka.Client
	readers *nodeConsumer // the partition readers (consumer.go)
}

// NewKafkaClient builds a client from the kafka section of the config.
func NewKafkaClient(cfg config.Kafka) (*KafkaClient, error) {
	auth, err := newKafkaAuth(cfg)
	if err != nil {
		return nil, err
	}
	transport := transportWith(cfg, auth)
	transport.MetadataTTL = 5 * time.Second
	readOpts := readerOpts(cfg, auth)
	return &KafkaClient{
		brokers: cfg.BootstrapServers,
		client:  &kafka.Client{Addr: kafka.TCP(cfg.BootstrapServers...), Timeout: 10 * time.Second, Transport: transport},
		readers: newNodeConsumer(readOpts),
	}, nil
}

// newTransport is a kafka-go transport to the brokers of the kafka section,
// with its client id, TLS and SASL settings and a 10s dial timeout.
func newTransport(cfg config.Kafka) (*kafka.Transport, error) {
	auth, err := newKafkaAuth(cfg)
	if err != nil {
		return nil, err
	}
	return transportWith(cfg, auth), nil
}

func transportWith(cfg config.Kafka, auth kafkaAuth) *kafka.Transport {
	return &kafka.Transport{Dial: (&net.Dialer{Timeout: 10 * time.Second}).DialContext, ClientID: cfg.ClientID, TLS: auth.tls, SASL: auth.kafkaGo}
}

// kafkaAuth is the TLS and SASL of the kafka section for both Kafka
// libraries, built once per client so that with AWS_MSK_IAM the two share
// one AWS configuration and credential cache.
type kafkaAuth struct {
	tls     *tls.Config
	franz   franzsasl.Mechanism // the partition readers' (franz-go)
	kafkaGo sasl.Mechanism      // metadata, offsets, dead letters (kafka-go)
}

func newKafkaAuth(cfg config.Kafka) (kafkaAuth, error) {
	tlsCfg, err := tlsConfig(cfg.TLS)
	if err != nil {
		return kafkaAuth{}, err
	}
	if strings.EqualFold(cfg.SASL.Mechanism, "AWS_MSK_IAM") {
		// Loading reads the environment and the shared files only;
		// credentials are fetched (ECS, IMDS) on the first connection.
		m, err := newMSKIAM(context.Background(), cfg.BootstrapServers)
		if err != nil {
			return kafkaAuth{}, err
		}
		return kafkaAuth{tls: tlsCfg, franz: m, kafkaGo: kafkaGoSASL{m}}, nil
	}
	kg, err := saslMechanism(cfg.SASL)
	if err != nil {
		return kafkaAuth{}, err
	}
	fr, err := readerSASL(cfg.SASL)
	if err != nil {
		return kafkaAuth{}, err
	}
	return kafkaAuth{tls: tlsCfg, franz: fr, kafkaGo: kg}, nil
}

func tlsConfig(c config.TLS) (*tls.Config, error) {
	if !c.Enabled {
		return nil, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.InsecureSkipVerify} //nolint:gosec // operator's explicit choice
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("kafka.tls.ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("kafka.tls.ca_file: %s holds no PEM certificate", c.CAFile)
		}
		t.RootCAs = pool
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("kafka.tls.cert_file: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}

func saslMechanism(c config.SASL) (sasl.Mechanism, error) {
	switch strings.ToUpper(c.Mechanism) {
	case "":
		return nil, nil
	case "PLAIN":
		return plain.Mechanism{Username: c.Username, Password: c.Password}, nil
	case "SCRAM-SHA-256":
		m, err := scram.Mechanism(scram.SHA256, c.Username, c.Password)
		if err != nil {
			return nil, fmt.Errorf("kafka.sasl: %w", err)
		}
		return m, nil
	case "SCRAM-SHA-512":
		m, err := scram.Mechanism(scram.SHA512, c.Username, c.Password)
		if err != nil {
			return nil, fmt.Errorf("kafka.sasl: %w", err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("kafka.sasl.mechanism: unsupported %q", c.Mechanism)
}

// Health is what the partition readers saw of the brokers (health.go).
func (k *KafkaClient) Health() Health { return k.readers.health() }

// Topics returns every topic and its partition count.
func (k *KafkaClient) Topics(ctx context.Context) (map[string]int32, error) {
	resp, err := k.client.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return nil, fmt.Errorf("listing topics on %s: %w", strings.Join(k.brokers, ","), err)
	}
	out := map[string]int32{}
	for _, t := range resp.Topics {
		if t.Error != nil || t.Internal {
			continue
		}
		out[t.Name] = int32(len(t.Partitions))
	}
	return out, nil
}

// Offsets returns the earliest or latest offset of partitions of a topic;
// latest is the last stable offset, the end a read-committed reader sees.
func (k *KafkaClient) Offsets(ctx context.Context, topic string, partitions []int32, latest bool) (map[int32]int64, error) {
	reqs := make([]kafka.OffsetRequest, 0, len(partitions))
	for _, p := range partitions {
		if latest {
			reqs = append(reqs, kafka.LastOffsetOf(int(p)))
		} else {
			reqs = append(reqs, kafka.FirstOffsetOf(int(p)))
		}
	}
	resp, err := k.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}, IsolationLevel: kafka.ReadCommitted})
	if err != nil {
		return nil, fmt.Errorf("listing offsets of %s: %w", topic, err)
	}
	out := map[int32]int64{}
	var errs []error
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			errs = append(errs, fmt.Errorf("listing offsets of %s/%d: %w", topic, po.Partition, po.Error))
			continue
		}
		if latest {
			out[int32(po.Partition)] = po.LastOffset
		} else {
			out[int32(po.Partition)] = po.FirstOffset
		}
	}
	return out, errors.Join(errs...)
}

// NewReader starts reading one partition at offset, read committed (see
// committed.go), through the node's one franz-go client (consumer.go);
// fetchBytes is the partition's share of a fetch and bounds the records
// queued for it. The errors the client retries go to onError.
func (k *KafkaClient) NewReader(tp ledger.TopicPartition, offset int64, fetchBytes int32, onError func(error)) PartitionReader {
	return k.readers.reader(tp, offset, fetchBytes, onError)
}

// SetQueueLimit bounds the bytes of fetched records waiting for their
// readers, across every partition the client reads, and the size of one
// fetch; 0 lifts the bound (each partition is still bounded by its
// reader's fetch bytes).
func (k *KafkaClient) SetQueueLimit(bytes int64) { k.readers.bound.setLimit(bytes) }

// OffsetsAt returns, per partition, the first offset whose record time is
// at or after t; a partition with no such record answers its end (the next
// offset to be written), as Kafka's ListOffsets does with -1.
func (k *KafkaClient) OffsetsAt(ctx context.Context, topic string, partitions []int32, t time.Time) (map[int32]int64, error) {
	reqs := make([]kafka.OffsetRequest, 0, len(partitions))
	for _, p := range partitions {
		reqs = append(reqs, kafka.TimeOffsetOf(int(p), t))
	}
	resp, err := k.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}, IsolationLevel: kafka.ReadCommitted})
	if err != nil {
		return nil, fmt.Errorf("listing offsets of %s at %s: %w", topic, t.Format(time.RFC3339), err)
	}
	out := map[int32]int64{}
	var errs []error
	var missing []int32
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			errs = append(errs, fmt.Errorf("listing offsets of %s/%d: %w", topic, po.Partition, po.Error))
			continue
		}
		found := false
		for off := range po.Offsets {
			if off >= 0 && (!found || off < out[int32(po.Partition)]) {
				out[int32(po.Partition)], found = off, true
			}
		}
		if !found {
			missing = append(missing, int32(po.Partition))
		}
	}
	if len(missing) > 0 {
		ends, err := k.Offsets(ctx, topic, missing, true)
		if err != nil {
			errs = append(errs, err)
		}
		for p, off := range ends {
			out[p] = off
		}
	}
	return out, errors.Join(errs...)
}
