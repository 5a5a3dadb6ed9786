package schemas

import "errors"

// Sentinels of this package. Bad-record errors also wrap
// records.ErrBadRecord (see Decoder).
var (
	// ErrUnavailable: the registry could not be asked (unreachable, timed
	// out, answered 5xx or 429). Transient: retry.
	ErrUnavailable = errors.New("schema registry unavailable")
	// ErrNotFound: the registry answered that the schema id or subject
	// does not exist.
	ErrNotFound = errors.New("schema not found")
	// ErrWireFormat: the bytes do not start with the Confluent header.
	ErrWireFormat = errors.New("not in the schema registry wire format")
	// ErrUnsupported: a schema uses something Floe cannot map to Iceberg.
	ErrUnsupported = errors.New("unsupported schema")
)
