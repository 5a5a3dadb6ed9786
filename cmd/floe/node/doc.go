// Package node builds and runs one Floe node, the composition root: New
// wires Raft (cluster/raftnode), the worker, the assignment controller, the
// state backup, notifications, the catalog endpoint and mirrors, and the
// admin API together, and runs the graceful drain. The admin API's backend
// (members, mappings, pause, resume, rewind, snapshots, maintenance, the
// status report) is its own package, cmd/floe/node/backend, which Node
// embeds: New builds it over the Raft member and attaches the worker's
// parts once they exist.
//
// It also holds the shims that show the replicated state to the worker, the
// assignment controller and catalog sync through their own small interfaces
// (adapters.go, catalogs.go), and the catalog of record its Raft node
// (replica.go), so that those packages never import Raft.
//
// Only cmd/ (serve, demo, the benches) and tests may import this package: it
// is the composition root's body, and nothing else should build a node.
package node
