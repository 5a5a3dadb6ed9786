// Package restsync mirrors Floe's tables one way into external Iceberg REST
// catalogs (Polaris, Unity, Nessie, Lakekeeper, the Apache reference
// server): it registers each table at its current metadata file and then
// points it at each new one. Floe's replicated state stays the catalog of
// record; the external catalog is a read-only view whose entries are
// overwritten at the next sync. A Syncer is driven by catalogsync.Sync on
// the table's committer.
//
// Pointing an existing entry at a new metadata file uses the spec's
// registerTable with overwrite=true; a server that does not honor it (it
// answers 409 or 400) gets drop-without-purge followed by register, which
// every REST catalog supports but which leaves the table absent for the
// moment between the two calls.
package restsync
