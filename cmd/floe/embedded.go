package main

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// The in-process Kafka broker (franz-go's kfake) and Schema Registry
// (worker/schemas/registrytest) that `floe demo` and `floe bench` run against.
// Both are test fakes linked into the binary only for those commands, so
// this is the one production file that imports them: everything else calls
// the small API below, and a build without demo and bench would drop them
// by dropping this file.

// embeddedKafka is one in-process broker.
type embeddedKafka struct{ c *kfake.Cluster }

// startEmbeddedKafka starts one broker with the topics, each with the
// given number of partitions.
func startEmbeddedKafka(partitions int, topics ...string) (*embeddedKafka, error) {
	opts := []kfake.Opt{kfake.NumBrokers(1)}
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(int32(partitions), topics...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting in-process kafka: %w", err)
	}
	return &embeddedKafka{c: c}, nil
}

// Addrs are the broker's listen addresses (bootstrap servers).
func (k *embeddedKafka) Addrs() []string { return k.c.ListenAddrs() }

// Close stops the broker.
func (k *embeddedKafka) Close() { k.c.Close() }

// producer is a franz-go client seeded with the broker, for producing the
// demo's and benches' records.
func (k *embeddedKafka) producer(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(k.Addrs()...)}, opts...)...)
}

// embeddedRegistry is an in-process Schema Registry.
type embeddedRegistry struct{ r *registrytest.Registry }

func startEmbeddedRegistry() *embeddedRegistry { return &embeddedRegistry{r: registrytest.New()} }

// URL is the registry's base URL.
func (e *embeddedRegistry) URL() string { return e.r.URL }

// Close stops the registry.
func (e *embeddedRegistry) Close() { e.r.Close() }

// orderAvroValues registers the order schema (the JSON bench's record as
// Avro) under subject and returns n records in the Confluent wire format
// and their total size.
func (e *embeddedRegistry) orderAvroValues(subject string, n int) ([][]byte, int64, error) {
	id := e.r.Register(subject, "AVRO", registrytest.OrderAvro)
	values := make([][]byte, n)
	var bytes int64
	for i := range n {
		p, err := registrytest.Avro(registrytest.OrderAvro, registrytest.OrderAvroValue(i))
		if err != nil {
			return nil, 0, err
		}
		values[i] = registrytest.Frame(id, nil, p)
		bytes += int64(len(values[i]))
	}
	return values, bytes, nil
}
