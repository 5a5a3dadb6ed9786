// Package names holds the one rule for names that reach the replicated
// state or a path (namespace parts, table names) and the bounds of property
// maps and other client-supplied strings. The admin API (through config),
// the templates that derive names from topics (config) and the catalog of
// record (cluster/catalog) all check with it, so a name one of them accepts
// is one every other accepts, and one S3, a local file system and AWS Glue
// can store. It imports nothing of Floe.
package names
