package status

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// ClusterScope says which nodes a cluster-wide report joins: those whose
// reports it holds, and those it could not reach with why. A report of one
// node has none.
type ClusterScope struct {
	Nodes   []string          `json:"nodes"`
	Missing map[string]string `json:"missing,omitempty"`
}

// stateRank orders table states by how much an operator must look: the
// cluster-wide state of a table is the worst any node reports.
var stateRank = map[string]int{
	StatePending: 0, StateRunning: 1, StateUnmapped: 2, StateDegraded: 3,
	StateConfigIssue: 4, StateSuspended: 5, StateFailed: 6,
}

// MergeCluster joins the report of the node serving the request (local)
// with its peers' into one cluster-wide report, the same whichever node
// builds it (up to the moment each was taken). What is replicated (rows,
// files, snapshots, committed offsets, freshness) is the same in every
// report and taken from local; what each node did itself (its Activity,
// object requests and metadata bytes) is summed over the nodes; what only
// one node knows is taken from it: a partition's reader state from the node
// reading it, compaction's small-file count, the upsert counters and the
// catalog sync errors from the table's committer. A table's state is the
// worst any node reports, with each node's reason; node problems and
// brokers are kept per node. missing names the members that did not answer.
func MergeCluster(local Report, peers []Report, missing map[string]string) Report {
	all := append([]Report{local}, peers...)
	out := local
	out.Problems = map[string]string{}
	out.Brokers = nil
	out.Cluster = &ClusterScope{Missing: maps.Clone(missing)}
	for _, r := range all {
		out.Cluster.Nodes = append(out.Cluster.Nodes, r.Node)
		for k, v := range r.Problems {
			out.Problems[r.Node+": "+k] = v
		}
	}
	for node, why := range missing {
		out.Problems[node+": unreachable"] = "its share of the cluster's figures is missing: " + why
	}
	slices.Sort(out.Cluster.Nodes)
	out.Brokers = mergeBrokers(all)
	byTable := map[string][]tableOf{}
	for _, r := range all {
		for _, t := range r.Tables {
			byTable[t.Table] = append(byTable[t.Table], tableOf{node: r.Node, t: t})
		}
	}
	out.Tables = nil
	for _, name := range slices.Sorted(maps.Keys(byTable)) {
		out.Tables = append(out.Tables, mergeTable(byTable[name], len(all) > 1))
	}
	return out
}

type tableOf struct {
	node string
	t    TableReport
}

// mergeTable joins one table's reports; the first is the local node's
// when it knows the table.
func mergeTable(reps []tableOf, prefix bool) TableReport {
	out := reps[0].t
	out.Activity = Activity{}
	out.ObjectRequests = ObjectRequests{}
	out.MetadataBytesWritten, out.NodeCommits = 0, 0
	var reasons []string
	for _, r := range reps {
		t := r.t
		addActivity(&out.Activity, t.Activity)
		out.ObjectRequests.Put += t.ObjectRequests.Put
		out.ObjectRequests.Get += t.ObjectRequests.Get
		out.ObjectRequests.List += t.ObjectRequests.List
		out.ObjectRequests.Delete += t.ObjectRequests.Delete
		out.MetadataBytesWritten += t.MetadataBytesWritten
		out.NodeCommits += t.NodeCommits
		if stateRank[t.State] > stateRank[out.State] {
			out.State = t.State
		}
		if t.Reason != "" {
			if prefix {
				reasons = append(reasons, "on "+r.node+": "+t.Reason)
			} else {
				reasons = append(reasons, t.Reason)
			}
		}
		if out.SuspendedAt == nil && t.SuspendedAt != nil {
			out.SuspendedAt = t.SuspendedAt
		}
		if r.node == t.Committer && r.node != "" {
			// Only the committer compacts, syncs catalogs and keeps the
			// upsert index: its view of them is the table's.
			out.SmallFiles, out.Upsert, out.DeadLetterDeltaVersion = t.SmallFiles, t.Upsert, t.DeadLetterDeltaVersion
			out.Catalogs = t.Catalogs
		}
	}
	out.Reason = strings.Join(reasons, "; ")
	out.Partitions = mergePartitions(reps)
	out.Lag, out.LagSec = 0, 0
	for _, p := range out.Partitions {
		out.Lag += p.Lag
		out.LagSec = max(out.LagSec, p.LagSec)
	}
	return out
}

// addActivity adds what one node did for a table to the sum.
func addActivity(sum *Activity, a Activity) {
	sum.Consumed += a.Consumed
	sum.BytesConsumed += a.BytesConsumed
	sum.DeadLettered += a.DeadLettered
	sum.Skipped += a.Skipped
	sum.FilesWritten += a.FilesWritten
	sum.BytesWritten += a.BytesWritten
	sum.CommitFailures += a.CommitFailures
	sum.SnapshotsExpired += a.SnapshotsExpired
	sum.OrphansDeleted += a.OrphansDeleted
	sum.Compactions += a.Compactions
	sum.FilesRewritten += a.FilesRewritten
	sum.BytesRewritten += a.BytesRewritten
	sum.Tombstones += a.Tombstones
	sum.LastExpiry = latest(sum.LastExpiry, a.LastExpiry)
	sum.LastOrphanCleanup = latest(sum.LastOrphanCleanup, a.LastOrphanCleanup)
	sum.LastCompaction = latest(sum.LastCompaction, a.LastCompaction)
	sum.SmallFiles = max(sum.SmallFiles, a.SmallFiles) // the committer's replaces it (mergeTable)
	sum.LastDeadLetters = append(sum.LastDeadLetters, a.LastDeadLetters...)
	if n := len(sum.LastDeadLetters); n > MaxLastDeadLetters {
		sum.LastDeadLetters = slices.Clone(sum.LastDeadLetters[n-MaxLastDeadLetters:])
	}
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// mergePartitions takes each partition from the node that reads it (the
// report's Node field names it), else from the first report.
func mergePartitions(reps []tableOf) []PartitionReport {
	byKey := map[string]PartitionReport{}
	var keys []string
	for i, r := range reps {
		for _, p := range r.t.Partitions {
			k := fmt.Sprintf("%s/%d", p.Topic, p.Partition)
			_, seen := byKey[k]
			if !seen {
				keys = append(keys, k)
			}
			if !seen || (p.Node == r.node && i > 0) {
				byKey[k] = p
			}
		}
	}
	out := make([]PartitionReport, 0, len(keys))
	for _, k := range keys {
		out = append(out, byKey[k])
	}
	slices.SortFunc(out, func(a, b PartitionReport) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// mergeBrokers joins the nodes' views of each broker: down if any node
// sees it down (that node's reason, prefixed with it), its last answer the
// newest any node saw, its partitions summed.
func mergeBrokers(all []Report) []BrokerStatus {
	by := map[string]BrokerStatus{}
	for _, r := range all {
		for _, b := range r.Brokers {
			m, ok := by[b.Addr]
			if !ok {
				m = BrokerStatus{Addr: b.Addr, NodeID: b.NodeID, Up: true}
			}
			m.NodeID = max(m.NodeID, b.NodeID)
			m.Partitions += b.Partitions
			m.LastResponse = latest(m.LastResponse, b.LastResponse)
			if !b.Up {
				if m.Up || b.Since.Before(m.Since) {
					m.Since = b.Since
				}
				m.Up = false
				m.Reason = strings.TrimPrefix(m.Reason+"; ", "; ") + "on " + r.Node + ": " + b.Reason
			}
			by[b.Addr] = m
		}
	}
	out := make([]BrokerStatus, 0, len(by))
	for _, k := range slices.Sorted(maps.Keys(by)) {
		out = append(out, by[k])
	}
	return out
}
