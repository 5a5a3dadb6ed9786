// Package source talks to the Kafka brokers with segmentio/kafka-go: the
// KafkaClient lists topics and offsets and opens one PartitionReader per
// partition, delivering Messages; the DeadLetterWriter produces dead
// letters to a topic. TLS and SASL come from the kafka section of the
// configuration.
//
// Message and PartitionReader are defined here because the worker's Kafka
// interface returns them and a fake must return the same types. source
// imports config, ledger and records only; worker and its subpackages
// import it, and cmd/floe builds the client and writer.
package source
