// Package restcatalog serves the Iceberg REST Catalog API (the read half of
// shared/specs/iceberg-rest-catalog-open-api.yaml) from Floe's catalog of
// record. Every node serves it from its local replicated state; a client
// that must see its own last commit asks for strong reads. Writes are
// refused with 403: each Floe table has one writer, its committer, and a
// second writer would break the exactly-once bookkeeping.
//
// The package knows neither Raft nor the cluster: it reads through the
// Catalog and Syncer interfaces, which package node wires to catalog.Catalog
// (cluster/catalog) and raftnode.Node.
package restcatalog
