package config

// Defaults and bounds of max_nesting_depth and max_columns; the same as
// records' (config imports nothing of records; a test in worker/ingest
// pins them equal).
const (
	DefaultMaxNestingDepth = 64
	DefaultMaxColumns      = 1000
	MaxNestingDepthCap     = 256
	MaxColumnsCap          = 10000
)

// checkRecordLimits bounds max_nesting_depth and max_columns (prefix is
// the mapping's field path with a trailing dot, or empty for the node's).
// A mapping may leave them 0 (the node's); the node's must be set.
func checkRecordLimits(bad func(field, format string, args ...any), prefix string, depth, columns int, zeroOK bool) {
	if !(zeroOK && depth == 0) && (depth < 1 || depth > MaxNestingDepthCap) {
		bad(prefix+"max_nesting_depth", "%d: use 1 to %d (default %d)", depth, MaxNestingDepthCap, DefaultMaxNestingDepth)
	}
	if !(zeroOK && columns == 0) && (columns < 1 || columns > MaxColumnsCap) {
		bad(prefix+"max_columns", "%d: use 1 to %d (default %d)", columns, MaxColumnsCap, DefaultMaxColumns)
	}
}
