// Package floebench is `floe bench`: Floe's benchmarks, run by the binary
// (cmd/floe adds Command) so that a user measures the build they run. Each
// builds its nodes through cmd/floe/node and feeds them from the in-process
// broker and registry (internal/embedded) or, with --brokers, a real Kafka;
// the real-broker runs start `floe serve` subprocesses of the running
// binary. It uses Floe only through exported, documented APIs, and nothing
// in production exists for it. Figures and how to reproduce them:
// docs/benchmarks.md.
package floebench
