// Command baseline is the honest baseline of the real-broker benchmark
// (make bench-kafka, bench/README.md): the loop a user would write in an
// afternoon to land a Kafka topic of JSON orders in an Iceberg table. One
// kafka-go reader per partition, encoding/json into a fixed struct, Arrow
// builders, and one iceberg-go Append per commit interval into a file://
// table through iceberg-go's Hadoop catalog. No exactly-once bookkeeping:
// it reads every partition from the first offset each time it starts, and
// it must still land every record once in one run.
//
// It imports nothing from Floe, so it measures only what the libraries a
// user would pick cost.
package main
