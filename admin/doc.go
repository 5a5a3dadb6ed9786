// Package admin serves a node's HTTP admin endpoints (health, readiness and
// the status report) and renders the status report for people. The full
// gRPC/HTTP admin API grows here.
package admin
