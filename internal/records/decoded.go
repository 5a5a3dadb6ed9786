package records

import "errors"

// MetadataPrefix starts the name of every metadata column Floe adds. Payload
// fields may not use it.
const MetadataPrefix = "_kafka_"

// KeyDecodedColumn holds a key decoded with its own registry schema. It is
// a payload field of the table's shape (so it evolves like one), filled
// only for keys that carry a schema id the registry knows.
const KeyDecodedColumn = MetadataPrefix + "key_decoded"

// ErrBadRecord marks a record that cannot be decoded; it goes where the
// table's error mode says. Decoders (schemas/, the worker's JSON parser)
// wrap it; the pipeline classifies with errors.Is.
var ErrBadRecord = errors.New("bad record")

// Decoded is a key or value decoded with its writer's schema.
type Decoded struct {
	// Value conforms to Shape (a map[string]any for a Struct shape).
	Value map[string]any
	// Shape is the schema's shape, shared by every record of the schema:
	// read it, never change it.
	Shape    *Shape
	SchemaID int
}
