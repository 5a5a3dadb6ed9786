// Package raftnode runs one member of Floe's Raft group (hashicorp/raft,
// raft-boltdb): storage and transport (node.go), the raft.FSM adapter over
// the pure state machine of package fsm (fsm.go), proposals with forwarding
// to the leader (forward.go) over the internal gRPC (rpc.go, handlers.go;
// refusals cross the wire with their sentinel, wireerr.go), joining and
// bootstrap-expect (join.go), the leader's health view and liveness
// (health.go), its voter management (autopilot.go), this node's membership
// record, drain and leave (membership.go), operator actions on members
// (operate_node.go) and metrics observation (observe.go).
//
// IsRetryable is the one classifier of proposal errors.
//
// It imports fsm, never catalog or recovery. The wiring (package node) and
// tests import it; components that need the state declare the
// few methods they use (catalog.Replica) and are given a shim.
//
// Lock order: healthTracker.mu and rpcClients.mu are leaves, never held
// across RPCs or Raft calls; fsm.FSM.Read may be called with neither held.
package raftnode
