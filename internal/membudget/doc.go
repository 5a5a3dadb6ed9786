// Package membudget is the one place a node's memory_budget is split: the
// records' share the worker charges, the fetch share the Kafka readers'
// queues are held to, and the soft memory limit floe serve sets. The node
// computes the split once and passes each share to the part that spends it.
package membudget
