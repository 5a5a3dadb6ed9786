package main

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/floe-io/floe/admin"
	"github.com/floe-io/floe/cluster"
	"github.com/floe-io/floe/ledger"
	"github.com/floe-io/floe/status"
)

// tableInfo is what the report reads of one table from the replicated state.
type tableInfo struct {
	key     string
	t       cluster.Table
	pending int
	// pendingBytes: data recorded, not yet committed
	pendingBytes int64
	paused       bool
	rewind       *cluster.TableRewind
	offsets      map[string]ledger.Offsets
	assign       map[string]ledger.Assignment
	commit       ledger.Assignment
	dlqRows      int64
}

// control reads the table's operator state and pending bytes.
func (ti *tableInfo) control(s *cluster.State) {
	_, ti.paused = s.Paused[ti.key]
	if rw := s.Rewinds[ti.key]; rw != nil {
		c := *rw
		ti.rewind = &c
	}
	for _, e := range s.Ledger.Pending[ti.key] {
		ti.pendingBytes += e.Bytes
	}
}

// operatorState shows a pause and the last rewind: a paused table is
// SUSPENDED on every node (the pause is replicated), and the rewind says
// what it did to the table's rows when nothing else needs saying.
func operatorState(tr *admin.TableReport, paused bool, rw *cluster.TableRewind) {
	if paused {
		tr.Paused = true
		tr.State = status.StateSuspended
		tr.Reason = "paused by an operator: resume with floe ctl tables resume " + tr.Table
	}
	if rw == nil {
		return
	}
	r := rewindReport(tr.Table, rw) // api_tables.go
	tr.Rewind = &r
	if tr.Reason == "" {
		tr.Reason = r.Describe
	}
}

// Report implements admin.Source: the replicated state joined with this
// node's runtime status.
func (n *floeNode) Report(ctx context.Context) (admin.Report, error) {
	now := time.Now()
	_, leader := n.raft.Leader()
	select {
	case <-n.started:
	default:
		return admin.Report{Node: n.cfg.Node.ID, Leader: leader, RaftState: n.raft.RaftState(), GeneratedAt: now,
			Problems: map[string]string{"cluster": "joining the raft group"}, Members: n.members()}, nil
	}
	runtime, problems := n.worker.Status().Snapshot()
	rep := admin.Report{Node: n.cfg.Node.ID, Leader: leader, RaftState: n.raft.RaftState(), GeneratedAt: now, Problems: problems, Members: n.members(),
		LeaderSince: n.raft.LeaderChangedAt()}
	n.raft.FSM().Read(func(s *cluster.State) {
		rep.AppliedIndex, rep.SkippedCommands = s.Applied, s.Skipped
		if m := s.Nodes[leader]; m != nil {
			rep.LeaderAddr = m.Admin
		}
		if b := s.LastBackup; b != nil {
			rep.Backup = &admin.BackupReport{Location: b.Location, At: time.UnixMilli(b.At), AgeSec: now.Sub(time.UnixMilli(b.At)).Seconds(), AppliedIndex: b.Applied}
		}
	})
	var infos []tableInfo
	n.raft.FSM().Read(func(s *cluster.State) {
		for _, key := range s.TableKeys() {
			if _, isDLQ := s.Tables[trimDLQ(key)]; isDLQ && trimDLQ(key) != key {
				continue // shown with its table
			}
			ti := tableInfo{key: key, t: *s.Tables[key], pending: len(s.Ledger.Pending[key]), offsets: map[string]ledger.Offsets{}, assign: map[string]ledger.Assignment{}, commit: s.Committers[key]}
			if d, ok := s.Tables[cluster.DLQKey(key)]; ok {
				ti.dlqRows = d.Rows
			}
			ti.control(s)
			for tp, o := range s.Ledger.Offsets[key] {
				ti.offsets[tp] = *o
				ti.assign[tp] = s.Ledger.Assignments[tp]
			}
			infos = append(infos, ti)
		}
		// Mapped tables with no data yet.
		for _, src := range s.Sources {
			if _, ok := s.Tables[src.Table]; !ok && !slices.ContainsFunc(infos, func(i tableInfo) bool { return i.key == src.Table }) {
				ti := tableInfo{key: src.Table, t: cluster.Table{Ident: ledger.TableIdent(src.Table)}, commit: s.Committers[src.Table]}
				ti.control(s)
				infos = append(infos, ti)
			}
		}
	})
	for key := range runtime {
		if !slices.ContainsFunc(infos, func(i tableInfo) bool { return i.key == key }) {
			infos = append(infos, tableInfo{key: key, t: cluster.Table{Ident: ledger.TableIdent(key)}})
		}
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].key < infos[j].key })
	for _, ti := range infos {
		rt := runtime[ti.key]
		tr := admin.TableReport{
			Table: ledger.DisplayName(ti.key), State: rt.State, Reason: rt.Reason,
			Rows: ti.t.Rows, DataFiles: ti.t.Files, DeadLetterRows: ti.dlqRows, Commits: ti.t.Commits,
			MetadataLocation: ti.t.MetadataLocation, PendingEntries: ti.pending,
			Consumed: rt.Consumed, DeadLettered: rt.DeadLettered, Skipped: rt.Skipped, CommitFailures: rt.CommitFailures,
			Committer: ti.commit.Node, SnapshotsExpired: rt.SnapshotsExpired, LastExpiry: rt.LastExpiry,
			OrphansDeleted: rt.OrphansDeleted, LastOrphanClean: rt.LastOrphanCleanup,
			SmallFiles: rt.SmallFiles, Compactions: rt.Compactions, FilesRewritten: rt.FilesRewritten,
			BytesRewritten: rt.BytesRewritten, LastCompaction: rt.LastCompaction,
			BytesConsumed: rt.BytesConsumed, FilesWritten: rt.FilesWritten, BytesWritten: rt.BytesWritten,
			NodeCommits: rt.Commits, PendingBytes: ti.pendingBytes,
		}
		if tr.State == "" {
			tr.State = status.StatePending
		}
		tr.Tombstones = rt.Tombstones
		if at := rt.SuspendedAt; at != nil {
			tr.SuspendedAt = &admin.SuspendedRecord{Topic: at.Topic, Partition: at.Partition, Offset: at.Offset, Error: at.Error}
		}
		if ti.t.LastCommitAt > 0 {
			tr.LastCommit = time.UnixMilli(ti.t.LastCommitAt)
			tr.LastCommitAgeSec = now.Sub(tr.LastCommit).Seconds()
		}
		if ti.t.NewestRecordTS > 0 {
			tr.FreshnessSec = now.Sub(time.UnixMilli(ti.t.NewestRecordTS)).Seconds()
		}
		if ti.t.MetadataLocation != "" {
			if tbl, err := n.catalog.LoadTable(ctx, ti.t.Ident); err == nil {
				tr.Snapshots = len(tbl.Metadata().Snapshots())
				// The current snapshot's totals reflect compaction, unlike
				// the count of files ever appended.
				if cur := tbl.CurrentSnapshot(); cur != nil && cur.Summary != nil {
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
			}
		}
		tps := map[string]bool{}
		for tp := range ti.offsets {
			tps[tp] = true
		}
		for tp := range rt.Partitions {
			tps[tp] = true
		}
		for _, tp := range sortedKeys(tps) {
			o, a := ti.offsets[tp], ti.assign[tp]
			pr := admin.PartitionReport{Start: o.Start, Committed: o.Committed, Recorded: o.End, Node: a.Node, Epoch: a.Epoch}
			if ps, ok := rt.Partitions[tp]; ok {
				pr.Topic, pr.Partition, pr.HighWatermark, pr.LastError = ps.Topic, ps.Partition, ps.HighWatermark, ps.LastError
				if _, known := ti.offsets[tp]; !known {
					pr.Start, pr.Committed, pr.Recorded = ps.Fetched, ps.Fetched, ps.Fetched
				}
			} else {
				pr.Topic, pr.Partition = splitTP(tp)
				pr.HighWatermark = o.End
			}
			pr.Lag = max(0, pr.HighWatermark-pr.Committed)
			// Lag in time: since the newest record committed for the
			// partition (the table's, for data committed before partitions
			// carried it), while records wait in Kafka.
			if newest := cmp.Or(o.NewestTS, ti.t.NewestRecordTS); pr.Lag > 0 && newest > 0 {
				pr.LagSec = max(0, now.Sub(time.UnixMilli(newest)).Seconds())
			}
			tr.Partitions = append(tr.Partitions, pr)
		}
		tr.Catalogs = n.catalogReports(ti.key, now) // catalogs.go
		operatorState(&tr, ti.paused, ti.rewind)
		rep.Tables = append(rep.Tables, tr)
	}
	return rep, nil
}
