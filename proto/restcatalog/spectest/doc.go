// Package spectest checks HTTP responses against the Iceberg REST Catalog
// OpenAPI spec, for the tests of Floe's endpoint (restcatalog and the
// end-to-end tests in cmd/floe). It is imported only by tests.
package spectest
