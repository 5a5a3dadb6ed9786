// Package deltaview reads a Delta Lake table the way an independent reader
// does, for tests: a replay of the JSON commit files written from the
// protocol (not with sinks/delta, so the writer is not checked with
// itself), the (partition, offset) of every row of the live Parquet files
// with arrow-go, and delta-rs when FLOE_DELTA_PYTHON names a Python with
// deltalake. Test support only.
package deltaview
