// Package offsetcheck is the independent exactly-once reader: it scans a
// table with iceberg-go and counts how often each (topic/partition, offset)
// appears, sharing no code with Floe's writer. `floe demo`'s summary and
// the end-to-end tests check their tables with it.
package offsetcheck
