// Package records defines the format-neutral form of decoded Kafka records
// that flows from worker/ (which fetches and decodes) to sinks/ (which write
// table files): a Record with its Kafka metadata and decoded value (or the
// JSON bytes of a value that fits its table's columns), and a
// Shape, the inferred type of schemaless values.
//
// It has no dependencies so both sides can share it without either importing
// the other.
package records
