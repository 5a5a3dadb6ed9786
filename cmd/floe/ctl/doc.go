// Package ctl implements "floe ctl", the command-line client of a node's gRPC admin API
// (proto/floe/admin/v1), and "floe status", a view over the same API.
//
// The binary's main adds the commands with root.AddCommand(ctl.Command(),
// ctl.StatusCommand()), prints a returned error as "floe: <error>" on stderr and exits
// with ExitCode(err).
//
// # Commands
//
//	floe ctl members                       ListMembers
//	floe ctl leader                        GetLeader
//	floe ctl leader transfer [ID]          TransferLeadership
//	floe ctl node drain ID                 DrainNode
//	floe ctl node undrain ID               UndrainNode
//	floe ctl node remove ID                RemoveNode
//	floe ctl mappings list|get NAME        ListMappings, GetMapping
//	floe ctl mappings create NAME ...      CreateMapping (flags or -f FILE, YAML or JSON)
//	floe ctl mappings update NAME ...      GetMapping, then UpdateMapping with the given flags overlaid
//	floe ctl mappings delete NAME          DeleteMapping
//	floe ctl tables list|get TABLE         ListTables, GetTable
//	floe ctl tables pause|resume TABLE     PauseTable, ResumeTable (--skip)
//	floe ctl tables rewind TABLE ...       RewindTable (--earliest|--latest|--timestamp|--offset, --policy)
//	floe ctl tables snapshots TABLE        ListSnapshots
//	floe ctl tables maintain TABLE         RunMaintenance
//	floe ctl health                        Check
//	floe ctl completion bash|zsh|fish|powershell
//
// # Connection
//
// --addr (env FLOE_ADDR, default 127.0.0.1:7421) names the node. The connection is
// plaintext h2c unless --tls, --ca-file, --cert-file/--key-file (mTLS) or --server-name
// is given. The token (--token, env FLOE_TOKEN, or --token-file) is sent on every call as
// "authorization: Bearer <token>", over plaintext too: plaintext is for trusted networks
// only, since the token can be read on the wire. Reads need a token of read scope,
// writes one of admin scope; health is open.
//
// # Output
//
// Reads print tables for people; writes print "ok (raft index N)", or "unchanged" when
// the state already was as asked. -o json prints the API's response messages as
// indented JSON with proto field names and every field present. floe status -o json
// (and --json) prints the status.Report JSON of GET /v1/status instead, as it always has.
//
// # Exit codes
//
// Scripts can rely on:
//
//	0  ok
//	1  other failure
//	2  usage error: bad flags or arguments
//	3  node unreachable: connection failed, gRPC UNAVAILABLE or DEADLINE_EXCEEDED
//	4  node not ready (floe ctl health)
//	5  authentication or authorization refused: UNAUTHENTICATED, PERMISSION_DENIED (HTTP 401, 403)
//	6  not found: NOT_FOUND
//	7  refused by the server: INVALID_ARGUMENT, ALREADY_EXISTS, FAILED_PRECONDITION
//
// Errors carry the server's status message, e.g.
// "refused: mapping.topic: set topic or topic_regex".
package ctl
