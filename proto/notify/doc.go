// Package notify posts a message to a chat webhook when a table changes
// state: Slack incoming webhooks, Mattermost and Teams-compatible relays all
// accept the plain {"text": "..."} body it sends.
//
// A Notifier polls the node's status report. Exactly one node speaks for
// each table: the table's committer, or the Raft leader for a table with no
// committer yet. It sends one message when a table's state differs from the
// last state it saw, for example
//
//	:warning: floe table db.orders is DEGRADED (was RUNNING): catalog unreachable (node n1)
//	:white_check_mark: floe table db.orders is RUNNING again (was DEGRADED) (node n1)
//
// On first sight of a table (at start, or when this node becomes the one
// that speaks for it) it says nothing unless the table is neither RUNNING nor
// PENDING; a table's normal start (PENDING to RUNNING) is not announced.
//
// Delivery retries network errors, 5xx and 429 answers with capped
// exponential backoff (1s doubling up to 30s, at most 5 tries) and then logs
// and drops the message. Webhook URLs carry secrets in their path, so logs
// show only the URL's scheme and host.
package notify
