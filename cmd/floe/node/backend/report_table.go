package backend

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/objstore"
	"github.com/floe-io/floe/internal/status"
)

// tableReport joins one table's replicated state with this node's runtime
// status of it.
func (b *Backend) tableReport(ctx context.Context, ti tableInfo, rt status.TableStatus, now time.Time) status.TableReport {
	tr := status.TableReport{
		Table: ledger.DisplayName(ti.key), State: rt.State, Reason: rt.Reason,
		Rows: ti.t.Rows, DataFiles: ti.t.Files, DeadLetterRows: ti.dlqRows, Commits: ti.t.Commits,
		MetadataLocation: ti.t.MetadataLocation, PendingEntries: ti.pending,
		Activity: rt.Activity, Committer: ti.commit.Node,
		NodeCommits: rt.Commits, PendingBytes: ti.pendingBytes,
	}
	if tr.State == "" {
		tr.State = status.StatePending
	}
	if tr.State == status.StatePending && ti.committedAny() {
		// PENDING means nothing committed yet, on every node: a node that
		// holds none of the table's partitions nor its committer role has
		// no runtime status of it beyond PENDING, but the replicated
		// state says what is committed.
		tr.State = status.StateRunning
	}
	if at := rt.SuspendedAt; at != nil {
		tr.SuspendedAt = &status.SuspendedRecord{Topic: at.Topic, Partition: at.Partition, Offset: at.Offset, Error: at.Error}
	}
	if ti.t.LastCommitAt > 0 {
		tr.LastCommit = time.UnixMilli(ti.t.LastCommitAt)
		tr.LastCommitAgeSec = now.Sub(tr.LastCommit).Seconds()
	}
	if ti.t.NewestRecordTS > 0 {
		tr.FreshnessSec = now.Sub(time.UnixMilli(ti.t.NewestRecordTS)).Seconds()
	}
	if ti.t.MetadataLocation != "" {
		b.snapshotTotals(ctx, &tr, ti.t.Ident)
	}
	tr.Partitions = partitionReports(ti, rt, now)
	tr.Lag, tr.LagSec = tableLag(tr.Partitions)
	tr.Catalogs = b.catalogReports(ti.key, now) // catalogs.go
	tr.Formats = b.worker.Formats(ti.key)
	if d := ti.t.Delta; d != nil {
		tr.Delta = &status.DeltaReport{Version: d.Version, Sequence: d.Sequence}
	}
	operatorState(&tr, ti.paused, ti.pausedBy, ti.rewind)
	if !b.worker.Mapped(ti.key) {
		tr.State = status.StateUnmapped
		tr.Reason = "no mapping routes a topic into this table now; its data stays readable (map a topic to it again to resume)"
	}
	return tr
}

// tableLag is a table's lag: the records its partitions have in Kafka not
// yet committed, and the largest partition's lag in time.
func tableLag(parts []status.PartitionReport) (records int64, sec float64) {
	for _, p := range parts {
		records += p.Lag
		sec = max(sec, p.LagSec)
	}
	return records, sec
}

// committedAny reports whether the replicated state holds committed data of
// the table: rows, or a partition whose committed offset passed its start
// (offsets of transaction markers or aborted records commit no row).
func (ti tableInfo) committedAny() bool {
	if ti.t.Rows > 0 {
		return true
	}
	for _, o := range ti.offsets {
		if o.Committed > o.Start {
			return true
		}
	}
	return false
}

// snapshotTotals reads the table's snapshot count and its current
// snapshot's totals, which reflect compaction, unlike the count of files
// ever appended. A table that does not load keeps the state's numbers.
func (b *Backend) snapshotTotals(ctx context.Context, tr *status.TableReport, ident []string) {
	tbl, err := b.catalog.LoadTable(ctx, ident)
	if err != nil {
		return
	}
	oc := objstore.For(tbl.Location())
	tr.ObjectRequests = status.ObjectRequests{Put: oc.Put, Get: oc.Get, List: oc.List, Delete: oc.Delete}
	tr.MetadataBytesWritten = oc.MetadataBytes
	tr.Snapshots = len(tbl.Metadata().Snapshots())
	cur := tbl.CurrentSnapshot()
	if cur == nil || cur.Summary == nil {
		return
	}
	p := cur.Summary.Properties
	if v, err := strconv.ParseInt(p["total-data-files"], 10, 64); err == nil {
		tr.DataFiles = v
	}
	if v, err := strconv.ParseInt(p["total-files-size"], 10, 64); err == nil {
		tr.DataBytes = v
	}
	if tr.DataFiles > 0 {
		tr.AvgFileBytes = tr.DataBytes / tr.DataFiles
	}
}

// partitionReports joins the ledger's offsets of every partition of the
// table with this node's fetchers of them.
func partitionReports(ti tableInfo, rt status.TableStatus, now time.Time) []status.PartitionReport {
	tps := map[string]bool{}
	for tp := range ti.offsets {
		tps[tp] = true
	}
	for tp := range rt.Partitions {
		tps[tp] = true
	}
	for tp := range rt.Held {
		tps[tp] = true
	}
	var out []status.PartitionReport
	for _, tp := range sortedKeys(tps) {
		o, a := ti.offsets[tp], ti.assign[tp]
		pr := status.PartitionReport{Start: o.Start, Committed: o.Committed, Recorded: o.End, Node: a.Node, Epoch: a.Epoch}
		if ps, ok := rt.Partitions[tp]; ok {
			pr.Topic, pr.Partition, pr.HighWatermark, pr.LastError = ps.Topic, ps.Partition, ps.HighWatermark, ps.LastError
			pr.Leader = ps.Leader
			if !ps.LeaderAnsweredAt.IsZero() {
				pr.FetchAgeSec = max(0, now.Sub(ps.LeaderAnsweredAt).Seconds())
			}
			if _, known := ti.offsets[tp]; !known {
				pr.Start, pr.Committed, pr.Recorded = ps.Fetched, ps.Fetched, ps.Fetched
			}
		} else {
			pr.Topic, pr.Partition = splitTP(tp)
			pr.HighWatermark = o.End
		}
		if h, ok := rt.Held[tp]; ok {
			pr.Held = h.Why
		}
		pr.Lag = max(0, pr.HighWatermark-pr.Committed)
		// Lag in time: since the newest record committed for the
		// partition (the table's, for data committed before partitions
		// carried it), while records wait in Kafka.
		if newest := cmp.Or(o.NewestTS, ti.t.NewestRecordTS); pr.Lag > 0 && newest > 0 {
			pr.LagSec = max(0, now.Sub(time.UnixMilli(newest)).Seconds())
		}
		out = append(out, pr)
	}
	return out
}

func trimDLQ(key string) string {
	if len(key) > 4 && key[len(key)-4:] == "_dlq" {
		return key[:len(key)-4]
	}
	return key
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		ti, pi := splitTP(out[i])
		tj, pj := splitTP(out[j])
		if ti != tj {
			return ti < tj
		}
		return pi < pj
	})
	return out
}

func splitTP(s string) (string, int32) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			var p int32
			fmt.Sscan(s[i+1:], &p)
			return s[:i], p
		}
	}
	return s, 0
}
