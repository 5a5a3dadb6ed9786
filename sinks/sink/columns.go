package sink

// The Kafka metadata columns every table Floe writes carries, whatever its
// format (docs/tables.md): the formats, upsert's key index and the
// exactly-once checks read rows back by them.
const (
	ColTopic     = "_kafka_topic"
	ColPartition = "_kafka_partition"
	ColOffset    = "_kafka_offset"
	ColTimestamp = "_kafka_timestamp"
	ColKey       = "_kafka_key"
	ColHeaders   = "_kafka_headers"
)
