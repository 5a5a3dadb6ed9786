// Package status holds the node's status report and runtime status: the
// Report the admin API serves and metrics and notify read, its text form
// for people (WriteText), and the Tracker the worker's pipelines, commit
// loops and catalog sync update as they go.
//
// It is a leaf (standard library only), so admin, metrics, notify, worker
// and its subpackages share one set of types without importing each other.
// Anything may import it; it imports no other Floe package.
//
// Lock order: Tracker.mu, then Table.mu. A pipeline holds its table's
// handle, so counting a record takes only that table's lock.
package status
