// Package assignment decides which node fetches each topic-partition and
// which node commits each table. Plan is a pure function, property-tested;
// Controller runs it on the Raft leader only and proposes its decisions as
// replicated entries.
//
// Every move bumps the epoch of what moved, so the ledger and the catalog can
// fence the previous holder (see package ledger).
package assignment
