package glue

import "errors"

// Sentinel errors of the glue package.
var (
	// ErrConflict: the Glue entry changed between reading it and updating
	// it (VersionId mismatch); the next attempt reads it again.
	ErrConflict = errors.New("glue table changed concurrently")
	// ErrMetadata: the table's metadata file could not be read.
	ErrMetadata = errors.New("reading table metadata")
	// ErrNameTooLong: a Glue database or table name would be longer than
	// MaxName.
	ErrNameTooLong = errors.New("longer than glue allows")
)

// Sentinel errors of the Delta entries.
var (
	// ErrNameTaken: the Glue name of a table's Delta entry is held by an
	// entry that is not a Delta table; Floe does not overwrite it.
	ErrNameTaken = errors.New("glue name taken by a table that is not a delta table")
	// ErrNoDeltaType: a column has no Delta type (as sinks/delta refuses it).
	ErrNoDeltaType = errors.New("column type has no delta equivalent")
)
