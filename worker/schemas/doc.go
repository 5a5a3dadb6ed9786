// Package schemas reads records written with a Confluent-compatible Schema
// Registry: a registry client (schemas by id cached for good, a subject's
// latest version refreshed periodically, basic or bearer auth), the wire
// format (magic byte 0, a 4-byte schema id, Protobuf message indexes), and
// decoders for Avro, Protobuf and JSON Schema that turn a schema into a
// records.Shape and a payload into values of that shape.
//
// Decoder implements ingest.SchemaDecoder. Its errors wrap
// records.ErrBadRecord when the record itself is at fault (wrong magic byte,
// an id the registry does not know, a truncated or invalid payload); any
// other error (registry unreachable, slow, 5xx) is transient: the worker
// retries it and shows the table DEGRADED, and never dead-letters the
// record for it.
package schemas
