// Package source talks to the Kafka brokers: the KafkaClient lists topics
// and offsets with segmentio/kafka-go and opens one PartitionReader per
// partition, delivering Messages, all of a node's readers served by one
// franz-go client read committed (consumer.go); the DeadLetterWriter
// produces dead letters to a topic. TLS and SASL come from the kafka section of the
// configuration.
//
// Message and PartitionReader are defined here because the worker's Kafka
// interface returns them and a fake must return the same types. source
// imports config, ledger and records only; worker and its subpackages
// import it, and cmd/floe builds the client and writer.
package source
