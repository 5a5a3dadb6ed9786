package backend

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
)

// tableInfo is what the report reads of one table from the replicated state.
type tableInfo struct {
	key     string
	t       fsm.Table
	pending int
	// pendingBytes: data recorded, not yet committed
	pendingBytes int64
	paused       bool
	pausedBy     string
	rewind       *fsm.TableRewind
	offsets      map[string]ledger.Offsets
	assign       map[string]ledger.Assignment
	commit       ledger.Assignment
	dlqRows      int64
}

// control reads the table's operator state and pending bytes.
func (ti *tableInfo) control(s *fsm.State) {
	_, ti.paused = s.Paused[ti.key]
	ti.pausedBy = s.PausedBy[ti.key]
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
func operatorState(tr *status.TableReport, paused bool, pausedBy string, rw *fsm.TableRewind) {
	if paused {
		tr.Paused, tr.PausedBy = true, pausedBy
		tr.State = status.StateSuspended
		who := "an operator"
		if pausedBy != "" {
			who = pausedBy
		}
		tr.Reason = "paused by " + who + ": resume with floe ctl tables resume " + tr.Table
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
func (b *Backend) Report(ctx context.Context) (status.Report, error) {
	now := time.Now()
	_, leader := b.raft.Leader()
	select {
	case <-b.started:
	default:
		rep := status.Report{Node: b.cfg.Node.ID, Leader: leader, RaftState: b.raft.RaftState(), GeneratedAt: now,
			Problems: map[string]string{"cluster": "joining the raft group"}, Members: b.Members()}
		upgradeRequired(&rep, b.raft.FSM(), b.raft.ResumeProblem()) // a halt while catching up keeps it joining
		storageProblem(&rep, b.raft.StorageProblem())
		return rep, nil
	}
	runtime, problems := b.worker.Status().Snapshot()
	rep := status.Report{Node: b.cfg.Node.ID, Leader: leader, RaftState: b.raft.RaftState(), GeneratedAt: now, Problems: problems, Members: b.Members(),
		LeaderSince: b.raft.LeaderChangedAt()}
	upgradeRequired(&rep, b.raft.FSM(), b.raft.ResumeProblem())
	storageProblem(&rep, b.raft.StorageProblem())
	held, limit := b.worker.MemoryHeld()
	rep.Memory = &status.MemoryReport{HeldBytes: held, LimitBytes: limit, BudgetBytes: int64(b.cfg.MemoryBudget)}
	rep.Brokers = b.worker.Status().Brokers()
	b.raft.FSM().Read(func(s *fsm.State) {
		rep.AppliedIndex, rep.SkippedCommands = s.Applied, s.Skipped
		if m := s.Nodes[leader]; m != nil {
			rep.LeaderAddr = m.Admin
		}
		if b := s.LastBackup; b != nil {
			rep.Backup = &status.BackupReport{Location: b.Location, At: time.UnixMilli(b.At), AgeSec: now.Sub(time.UnixMilli(b.At)).Seconds(), AppliedIndex: b.Applied}
		}
	})
	for _, ti := range b.tableInfos(runtime) {
		rep.Tables = append(rep.Tables, b.tableReport(ctx, ti, runtime[ti.key], now))
	}
	return rep, nil
}

// upgradeRequired shows a halted FSM: the node state and a problem naming
// the entry, so the status says why nothing moves on this node, and why it
// has not resumed from the leader's state (resume, "" before a try).
func upgradeRequired(rep *status.Report, f *fsm.FSM, resume string) {
	h, halted := f.Halted()
	if !halted {
		return
	}
	rep.State = status.NodeUpgradeRequired
	if rep.Problems == nil {
		rep.Problems = map[string]string{}
	}
	rep.Problems["upgrade"] = h.Error()
	if resume != "" {
		rep.Problems["upgrade"] += "; not resumed yet: " + resume
	}
}

// storageProblem shows that the node cannot write its Raft log (a full
// disk): nothing it proposes or receives is persisted or applied here
// until it can.
func storageProblem(rep *status.Report, p string) {
	if p == "" {
		return
	}
	if rep.Problems == nil {
		rep.Problems = map[string]string{}
	}
	rep.Problems["raft storage"] = p
}

// tableInfos lists, by key, every table the state knows (a dead-letter
// table is shown with its table), every mapped table with no data yet, and
// every table only this node's runtime status knows.
func (b *Backend) tableInfos(runtime map[string]status.TableStatus) []tableInfo {
	var infos []tableInfo
	b.raft.FSM().Read(func(s *fsm.State) {
		for _, key := range s.TableKeys() {
			if _, isDLQ := s.Tables[trimDLQ(key)]; isDLQ && trimDLQ(key) != key {
				continue // shown with its table
			}
			ti := tableInfo{key: key, t: *s.Tables[key], pending: len(s.Ledger.Pending[key]), offsets: map[string]ledger.Offsets{}, assign: map[string]ledger.Assignment{}, commit: s.Committers[key]}
			if d, ok := s.Tables[fsm.DLQKey(key)]; ok {
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
				ti := tableInfo{key: src.Table, t: fsm.Table{Ident: ledger.TableIdent(src.Table)}, commit: s.Committers[src.Table]}
				ti.control(s)
				infos = append(infos, ti)
			}
		}
	})
	for key := range runtime {
		if !slices.ContainsFunc(infos, func(i tableInfo) bool { return i.key == key }) {
			infos = append(infos, tableInfo{key: key, t: fsm.Table{Ident: ledger.TableIdent(key)}})
		}
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].key < infos[j].key })
	return infos
}
