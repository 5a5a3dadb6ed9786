// Package testnode is the end-to-end tests' one way to build an in-process
// Floe node (Start, through node.New as floe serve does) and what they
// share around it: a configuration on free ports, an in-process broker and
// producer, waits on a node's report, and the exactly-once check through
// the independent reader (internal/offsetcheck). Test support: production
// code never imports it (internal/archtest).
package testnode
