package main

import (
	"log/slog"
	"math"
	"os"
	"runtime/debug"

	"github.com/floe-io/floe/config"
)

// memLimitSlack is what the node may use beyond memory_budget: the Go
// runtime, Raft, the admin server, and the Parquet encoding and catalog
// work of flushes in flight, which the budget does not charge.
const memLimitSlack = 256 << 20

// softMemoryLimit is the Go runtime's soft memory limit for a node with
// this memory budget, or 0 when the operator set GOMEMLIMIT (theirs wins).
//
// Why: the budget bounds the records the node holds, a live-heap figure;
// with the runtime's default GOGC the heap grows to twice the live heap
// before a collection, so a node holding its whole budget used three to
// four times it in resident memory (docs/benchmarks.md, make bench-kafka).
// With the limit, the collector runs harder as the heap nears
// memory_budget + 256 MiB instead of letting it double.
func softMemoryLimit(budget config.ByteSize, env func(string) string) int64 {
	if env("GOMEMLIMIT") != "" || budget <= 0 {
		return 0
	}
	if int64(budget) > math.MaxInt64-memLimitSlack {
		return math.MaxInt64
	}
	return int64(budget) + memLimitSlack
}

// applyMemoryLimit sets softMemoryLimit and says so.
func applyMemoryLimit(cfg config.Config, log *slog.Logger) {
	if limit := softMemoryLimit(cfg.MemoryBudget, os.Getenv); limit > 0 {
		debug.SetMemoryLimit(limit)
		log.Info("go runtime soft memory limit set", "bytes", limit, "memory_budget", int64(cfg.MemoryBudget))
	}
}
