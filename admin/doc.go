// Package admin serves a node's admin port: the gRPC admin API (cluster,
// tables and mappings, health; proto/floe/admin/v1) over a Backend, its
// HTTP/JSON form through grpc-gateway with /openapi.json, the plain probe,
// status and metrics routes, all on one listener (h2c or TLS/mTLS) with
// bearer-token scopes per RPC (api_auth.go). It also renders the status
// report for people (WriteText) and holds the small HTTP clients the CLI
// uses. The report's types live in the status leaf (admin names them
// through aliases in report.go), so metrics and notify need not import
// admin.
package admin
