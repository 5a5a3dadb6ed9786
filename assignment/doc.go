// Package assignment decides which node fetches each topic-partition and
// which node commits each table. Plan is a pure function, property-tested;
// Controller runs it on the Raft leader only and proposes its decisions as
// replicated entries.
//
// Plan's rules, in order of strength:
//
//   - Every partition has exactly one live holder, and per-node counts
//     differ by at most one (plan.go).
//   - Sticky: a partition stays with its live holder unless the count rule
//     or a load swap needs it, so a join moves only the newcomer's share and
//     a leave only the leaver's partitions.
//   - Throughput: free partitions go to the least loaded node with room;
//     then a few swaps, behind a hysteresis, even out measured load (load.go).
//   - Zones: among otherwise equal nodes, a topic's partitions and the
//     committer roles spread over zones (zones.go).
//   - One committer per table; a live one never moves (committers.go).
//
// Every move bumps the epoch of what moved, so the ledger and the catalog can
// fence the previous holder (see package ledger). Plan is deterministic: it
// sorts its inputs and never reads a clock or randomness, so any leader
// decides the same from the same state.
//
// The Controller settles after each election before load swaps, since a new
// leader has not yet heard the members' load reports (controller.go).
package assignment
