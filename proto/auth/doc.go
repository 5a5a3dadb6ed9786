// Package auth checks bearer tokens on Floe's HTTP APIs. Tokens carry a
// scope: read (the Iceberg REST catalog, status) or admin (everything read
// allows, plus operations that change things). Tokens come from a file and
// from the FLOE_AUTH_TOKENS variable; with none configured, authentication
// is off, so a node keeps working out of the box on a private network.
package auth
