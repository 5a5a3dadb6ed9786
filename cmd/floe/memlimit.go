package main

import (
	"context"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/membudget"
	"github.com/floe-io/floe/internal/procstatus"
)

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
	if env("GOMEMLIMIT") != "" {
		return 0
	}
	return membudget.Of(int64(budget)).SoftLimit
}

// limitBeside is the runtime's limit that keeps the process's resident
// memory within limit while it also holds fileRes bytes of file-backed
// and shared pages: those count in the resident size (and in an ECS
// task's memory) but not in the runtime's limit, which sees only the
// memory the runtime maps. Most of them are the executable's own code and
// read-only data (89 MB in the binary; 69 MiB of them resident at a real-
// broker drain's peak, /proc/PID/smaps_rollup), which is what put a node's
// peak resident size 3% over memory_budget + 256 MiB (docs/benchmarks.md's
// git history, run 10). A 64th of limit more is left for the collector's overshoot:
// the limit is soft, and while two flushes encode at once on a fast drain
// the heap passes it by a few MiB before a cycle ends (an Avro drain's
// peak 1,282 MiB against 1,280, docs/benchmarks.md's git history, "The
// flush in parts lands"). At least half of limit stays the runtime's.
func limitBeside(limit, fileRes int64) int64 {
	if limit <= 0 || limit == math.MaxInt64 {
		return limit
	}
	return max(limit-max(fileRes, 0)-limit/64, limit/2)
}

// fileResident is the file-backed and shared resident bytes (RssFile
// and RssShmem) of the text of /proc/self/status; ok is false when
// neither is there (not Linux).
func fileResident(status []byte) (n int64, ok bool) {
	f, err := procstatus.Parse(status, "RssFile", "RssShmem")
	if err != nil || len(f) == 0 {
		return 0, false
	}
	return int64(f["RssFile"] + f["RssShmem"]), true
}

// memLimitRefresh is how often the limit follows the file-backed resident
// memory: the executable's pages become resident as its code first runs.
const memLimitRefresh = 5 * time.Second

// applyMemoryLimit sets the runtime's soft memory limit (softMemoryLimit
// less the file-backed resident memory), says so, and keeps it following
// that memory until ctx ends.
func applyMemoryLimit(ctx context.Context, cfg config.Config, log *slog.Logger) {
	limit := softMemoryLimit(cfg.MemoryBudget, os.Getenv)
	if limit <= 0 {
		return
	}
	set := func() (int64, int64) {
		status, _ := os.ReadFile("/proc/self/status")
		fileRes, _ := fileResident(status)
		l := limitBeside(limit, fileRes)
		debug.SetMemoryLimit(l)
		return l, fileRes
	}
	l, fileRes := set()
	log.Info("go runtime soft memory limit set", "bytes", l, "memory_budget", int64(cfg.MemoryBudget), "file_resident", fileRes)
	go func() {
		t := time.NewTicker(memLimitRefresh)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				set()
			}
		}
	}()
}
