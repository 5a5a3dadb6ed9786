// Package iceberg is Floe's Apache Iceberg table sink: it maps decoded
// records to Iceberg schemas, writes Parquet data files with iceberg-go's
// table.WriteRecords, describes them for the ledger, and commits ledger
// entries as append snapshots through the catalog of record.
//
// Every snapshot it commits carries floe.offsets (the next offset of every
// partition the table holds), floe.commit-id and floe.entries in its summary,
// so a table alone says where it stands.
package iceberg
