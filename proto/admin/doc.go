// Package admin serves a node's admin port: the gRPC admin API (cluster,
// tables and mappings, health; proto/floe/admin/v1) over a Backend, its
// HTTP/JSON form through grpc-gateway with /openapi.json, the plain probe,
// status and metrics routes, all on one listener (h2c or TLS/mTLS) with
// bearer-token scopes per RPC (api_auth.go). It also holds the small HTTP
// clients the CLI uses. The report it serves, and its text form, live in
// the status leaf, so metrics and notify need not import admin.
package admin
