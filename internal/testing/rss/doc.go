// Package rss measures a test process's resident memory (Linux
// /proc/self/status) around a piece of work, for the tests that promise a
// node stays under a memory bound while it refuses oversized input. Heap
// statistics (runtime.MemStats) miss what the runtime keeps mapped, the
// stacks and anything outside the Go heap; resident memory is what an ECS
// task's limit counts.
package rss
