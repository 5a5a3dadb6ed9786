package membudget

import "math"

// Slack is what a node may use beyond memory_budget: the Go runtime's soft
// memory limit is set at memory_budget + Slack (cmd/floe/memlimit.go), room
// for the work of flushes in flight, which no charge sees.
const Slack = 256 << 20

// The split's divisors: a quarter for records, an eighth for fetches.
const (
	recordsDiv = 4
	fetchDiv   = 8
)

// Split is how a node divides its memory_budget. Records bounds the records
// the node holds, charged from fetch to the recorded flush (the worker's
// budget, worker/ingest/budget.go); Fetch bounds the readers' fetch queues
// together (records fetched and not yet taken by a fetcher, which the
// records' charge cannot see; worker/source/bound.go) and sizes each
// partition's fetch; the rest of the budget, with Slack, is for what no
// charge sees: the Arrow builders and Parquet pages of the flush in flight,
// the client's next fetch and the collector's headroom.
//
// Why a quarter and an eighth: with three quarters for records and a
// quarter for fetches, the live heap of a backlog drain on a real broker
// reached twice memory_budget, above the soft limit, where the collector
// ran without pause; half for records still cost the collector a third more
// CPU per record than a quarter (the runs are in docs/benchmarks.md's git
// history, "The budget's split" and "The records' share").
type Split struct {
	Budget    int64 // memory_budget; 0: unbounded
	Records   int64 // Budget / 4
	Fetch     int64 // Budget / 8
	SoftLimit int64 // Budget + Slack, the Go runtime's soft memory limit
}

// Of splits a memory_budget of budget bytes. A budget of 0 or less is
// unbounded: every share is 0.
func Of(budget int64) Split {
	if budget <= 0 {
		return Split{}
	}
	soft := int64(math.MaxInt64)
	if budget <= math.MaxInt64-Slack {
		soft = budget + Slack
	}
	return Split{Budget: budget, Records: budget / recordsDiv, Fetch: budget / fetchDiv, SoftLimit: soft}
}

// ForRecords is a budget whose Records share exceeds records, for tests
// that size a budget by the records it must hold.
func ForRecords(records int64) int64 { return records*recordsDiv + recordsDiv }
