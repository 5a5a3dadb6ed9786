package glue

import "errors"

// Sentinel errors of the glue package.
var (
	// ErrConflict: the Glue entry changed between reading it and updating
	// it (VersionId mismatch); the next attempt reads it again.
	ErrConflict = errors.New("glue table changed concurrently")
	// ErrMetadata: the table's metadata file could not be read.
	ErrMetadata = errors.New("reading table metadata")
)
