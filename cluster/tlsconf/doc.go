// Package tlsconf builds the mutual TLS of a node's internal ports (the
// internal RPC and the Raft transport) from PEM files it re-reads when they
// change, so certificates rotate without a restart, and makes the cluster's
// CA and node certificates (floe tls). It imports nothing of the module.
package tlsconf
