package embedded

import (
	"fmt"
	"net"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// Kafka is one in-process broker.
type Kafka struct{ c *kfake.Cluster }

// StartKafka starts one broker with the topics, each with the given number
// of partitions.
func StartKafka(partitions int, topics ...string) (*Kafka, error) {
	opts := []kfake.Opt{kfake.NumBrokers(1)}
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(int32(partitions), topics...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting in-process kafka: %w", err)
	}
	return &Kafka{c: c}, nil
}

// Addrs are the broker's listen addresses (bootstrap servers).
func (k *Kafka) Addrs() []string { return k.c.ListenAddrs() }

// Close stops the broker.
func (k *Kafka) Close() { k.c.Close() }

// Producer is a franz-go client seeded with the broker, for producing the
// demo's and benches' records.
func (k *Kafka) Producer(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(k.Addrs()...)}, opts...)...)
}

// Registry is an in-process Schema Registry.
type Registry struct{ r *registrytest.Registry }

// StartRegistry starts a registry on a loopback port.
func StartRegistry() *Registry { return &Registry{r: registrytest.New()} }

// URL is the registry's base URL.
func (e *Registry) URL() string { return e.r.URL }

// Close stops the registry.
func (e *Registry) Close() { e.r.Close() }

// OrderEncoder registers the benchmarks' order schema in format (avro or
// protobuf) under subject and returns the encoder of order i in the
// Confluent wire format.
func (e *Registry) OrderEncoder(subject, format string) (func(i int) ([]byte, error), error) {
	switch format {
	case "avro":
		id := e.r.Register(subject, "AVRO", registrytest.OrderAvro)
		return func(i int) ([]byte, error) {
			p, err := registrytest.Avro(registrytest.OrderAvro, registrytest.OrderAvroValue(i))
			return registrytest.Frame(id, nil, p), err
		}, nil
	case "protobuf":
		id := e.r.Register(subject, "PROTOBUF", registrytest.OrderProto)
		md, err := registrytest.Proto(registrytest.OrderProto, "bench.Order")
		if err != nil {
			return nil, fmt.Errorf("compiling the order's .proto: %w", err)
		}
		return func(i int) ([]byte, error) {
			p, err := registrytest.ProtoFromJSON(md, registrytest.OrderProtoJSON(i))
			return registrytest.Frame(id, []int{0}, p), err
		}, nil
	}
	return nil, fmt.Errorf("no order encoder for format %q", format)
}

// OrderAvroValues registers the order schema (the JSON bench's record as
// Avro) under subject and returns n records in the Confluent wire format
// and their total size.
func (e *Registry) OrderAvroValues(subject string, n int) ([][]byte, int64, error) {
	enc, err := e.OrderEncoder(subject, "avro")
	if err != nil {
		return nil, 0, err
	}
	values := make([][]byte, n)
	var bytes int64
	for i := range n {
		if values[i], err = enc(i); err != nil {
			return nil, 0, err
		}
		bytes += int64(len(values[i]))
	}
	return values, bytes, nil
}

// handedOut holds the addresses FreeAddr has returned: the kernel may give a
// port that was listened on and closed again to the next listener, and the
// nodes started together (a demo, a bench's cluster, a test fleet) must not
// be handed the same port before any of them binds it.
var handedOut = struct {
	sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// FreeAddr returns a loopback address with a port nothing listens on now and
// that this process has not handed out before.
func FreeAddr() (string, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		addr := l.Addr().String()
		l.Close()
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr, nil
		}
	}
	return "", fmt.Errorf("no free loopback port not handed out already after 100 tries")
}
