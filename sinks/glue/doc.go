// Package glue mirrors Floe's tables one way into the AWS Glue Data
// Catalog, the way Iceberg's own GlueCatalog registers them (EXTERNAL_TABLE,
// table_type=ICEBERG, metadata_location, previous_metadata_location,
// columns for engines that read them), so that Athena, EMR and PyIceberg's
// Glue catalog find them. Floe's replicated state stays the catalog of
// record: whatever anyone changes in Glue is overwritten at the next sync.
// A table written as [iceberg, delta] also gets a native Delta Lake entry,
// <table>_delta (table_type=DELTA, spark.sql.sources.provider=delta, the
// table root as location), from the DeltaSyncer its Syncer returns.
// A Syncer is driven by catalogsync.Sync on the table's committer.
package glue
