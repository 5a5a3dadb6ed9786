// Package metrics exposes a node's figures to Prometheus at GET /metrics on
// the admin port.
//
// Most figures are state the node already keeps for its status report
// (status.Report): a custom collector asks the Source for the report at
// scrape time, with a timeout, and turns it into constant metrics, so a
// scrape always shows the same numbers as `floe status` and nothing is
// counted twice. Counters in the report are cumulative since the node
// started and are exposed as Prometheus counters (a restart resets them,
// which rate and increase handle). If the report cannot be had, the scrape
// shows floe_scrape_error 1 and no table series.
//
// Events that the report does not keep (how long a commit or a Raft apply
// took, leader changes) are recorded as they happen through the Recorder
// methods of Metrics: ObserveCommit, ObserveApply and LeaderChanged.
//
// Everything lives in a private registry with the Go and process
// collectors; Handler serves it. Names lists every floe_* metric family, so
// that the alert rules and the dashboard in deploy/ can be checked against
// the code.
//
// Series that every node would report the same way are emitted by exactly
// one node where summing them would otherwise count them more than once:
// consumer lag is exposed by the node a partition is assigned to (the
// leader exposes unassigned partitions). Table-level gauges such as
// freshness are replicated state and appear on every node; aggregate them
// with max by (table).
package metrics
