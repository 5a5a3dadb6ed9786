// Package objstore counts the requests Floe makes to an s3:// warehouse,
// per table and per billing class (PUT, GET, LIST, DELETE), and the
// metadata bytes each table writes, so the cost of a table can be seen
// (issue 21: cost you can see); and it gives each table's data files the
// S3 storage class its mapping asks for (storage_class).
//
// It replaces iceberg-go's factory for the s3 scheme with one that builds
// the same S3 FileIO (through iceberg-go's own factory, reached under its
// s3a alias, with the configuration it would have loaded) plus an AWS SDK
// middleware that classifies each operation and attributes it to the table
// whose location holds the object (the path before its last data/ or
// metadata/ segment). Every component that opens the warehouse through
// iceberg-go's io.LoadFS is counted: the sink's writes, the catalog's
// metadata, scans by compaction, orphan listing, state backups.
//
// An operation counts once, however many times the SDK retried it; a
// multipart upload counts each of its requests (create, parts, complete).
// Metadata bytes are the bodies of successful uploads (PutObject, or each
// UploadPart) under a table's metadata/. An upload under a table's data/
// (PutObject, CreateMultipartUpload) takes the storage class that the
// node's ClassFunc (AddStorageClasses) gives the table at that moment;
// metadata files never do (see AddStorageClasses). file:// warehouses make
// no requests and count nothing.
//
// It also reads objects of up to 1 MiB whole when they are opened
// (smallread.go): iceberg-go's S3 file answers each ranged read with its
// own GET, so reading a small Parquet file cost about 15 requests.
package objstore
