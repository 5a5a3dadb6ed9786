// Package backend is a node's admin backend: it answers the admin API's
// reads and writes (proto/admin.Backend), builds the node's and the
// cluster's status report, keeps each table's hour of samples for the
// console, and asks peers where a table is suspended or to run its
// maintenance. cmd/floe/node, the wiring root, builds it with the node's
// Raft member and gives it the worker's parts once they exist.
package backend
