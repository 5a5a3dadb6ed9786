package backend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/names"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/proto/admin"
	"github.com/floe-io/floe/worker"
)

// tableKey resolves namespace.name to the key of a table the cluster knows
// (created, or the target of a registered source).
func (b *Backend) tableKey(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: table: name a table as namespace.name", admin.ErrInvalid)
	}
	parts := strings.Split(name, ".")
	if len(parts) < 2 || slices.Contains(parts, "") {
		return "", fmt.Errorf("%w: table: %s: use namespace.name", admin.ErrInvalid, names.Preview(name))
	}
	key := ledger.TableKey(parts)
	known := false
	b.raft.FSM().Read(func(s *fsm.State) {
		known = s.Tables[key] != nil
		for _, src := range s.Sources {
			known = known || src.Table == key
		}
	})
	if !known {
		return "", fmt.Errorf("%w: table %s", admin.ErrNotFound, names.Preview(name))
	}
	return key, nil
}

// PauseTable implements admin.Backend.
func (b *Backend) PauseTable(ctx context.Context, table string) (admin.WriteResult, error) {
	if err := b.ready(); err != nil {
		return admin.WriteResult{}, err
	}
	key, err := b.tableKey(table)
	if err != nil {
		return admin.WriteResult{}, err
	}
	paused := false
	b.raft.FSM().Read(func(s *fsm.State) { _, paused = s.Paused[key] })
	if paused {
		return admin.WriteResult{Unchanged: true, Message: table + " is already paused"}, nil
	}
	return b.operatorCommand(ctx, fsm.PauseTable{Table: key, At: time.Now().UnixMilli(), By: admin.Caller(ctx)}, "paused "+table)
}

// ResumeTable implements admin.Backend: it ends a pause and un-suspends the
// table on every node; with skip, past the bad records the table is
// suspended at on any node.
func (b *Backend) ResumeTable(ctx context.Context, table string, skip bool) (admin.WriteResult, error) {
	res, _, err := b.resume(ctx, table, skip)
	return res, err
}

// resume proposes a resume and returns the records it skips. Its answer
// says when the table is suspended at a bad record and the resume does
// not skip it: the table decodes the same record again and stops at it
// again, which an operator would otherwise learn only from the next
// status.
func (b *Backend) resume(ctx context.Context, table string, skip bool) (admin.WriteResult, []fsm.ResumeSkip, error) {
	if err := b.ready(); err != nil {
		return admin.WriteResult{}, nil, err
	}
	key, err := b.tableKey(table)
	if err != nil {
		return admin.WriteResult{}, nil, err
	}
	cmd := fsm.ResumeTable{Table: key, At: time.Now().UnixMilli()}
	stuck := b.suspendedAt(ctx, table, key)
	if skip {
		if len(stuck) == 0 {
			return admin.WriteResult{}, nil, fmt.Errorf("%w: skip: %s is not suspended at a bad record", admin.ErrConflict, table)
		}
		cmd.Skips = stuck
	}
	res, err := b.propose(ctx, cmd, resumeMessage(table, skip, stuck))
	return res, cmd.Skips, err
}

// suspendedAt lists the bad records the table is suspended at, on this
// node and the others, one per partition.
func (b *Backend) suspendedAt(ctx context.Context, table, key string) []fsm.ResumeSkip {
	found := b.suspendedElsewhere(ctx, table) // schemas.go
	if ts, _ := b.worker.Status().Snapshot(); ts[key].SuspendedAt != nil {
		found = append(found, *ts[key].SuspendedAt)
	}
	var out []fsm.ResumeSkip
	seen := map[ledger.TopicPartition]bool{}
	for _, r := range found {
		tp := ledger.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if !seen[tp] {
			seen[tp] = true
			out = append(out, fsm.ResumeSkip{TopicPartition: tp, Offset: r.Offset})
		}
	}
	return out
}

// resumeMessage is a resume's answer: the records it skips, or, when the
// table is suspended at bad records it does not skip, that it will stop
// at them again and how to skip them.
func resumeMessage(table string, skip bool, stuck []fsm.ResumeSkip) string {
	msg := "resumed " + table
	if skip {
		for _, s := range stuck {
			msg += fmt.Sprintf(", skipping %s offset %d", s.TopicPartition, s.Offset)
		}
		return msg
	}
	if len(stuck) == 0 {
		return msg
	}
	at := make([]string, len(stuck))
	for i, s := range stuck {
		at[i] = fmt.Sprintf("%s offset %d", s.TopicPartition, s.Offset)
	}
	record, it := "a bad record", "it"
	if len(stuck) > 1 {
		record, it = "bad records", "them"
	}
	return msg + fmt.Sprintf("; it is suspended at %s (%s) and will stop at %s again: "+
		"`floe ctl tables resume %s --skip` skips %s", record, strings.Join(at, ", "), it, table, it)
}

// Resume serves the older POST /v1/tables/{table}/resume route, whose
// answer lists the skipped records.
func (b *Backend) Resume(ctx context.Context, table string, skip bool) (any, error) {
	res, skips, err := b.resume(ctx, table, skip)
	if err != nil {
		return nil, err
	}
	out := worker.ResumeResult{Table: table, Message: res.Message}
	for _, s := range skips {
		out.Skips = append(out.Skips, status.SuspendedRecord{Topic: s.Topic, Partition: s.Partition, Offset: s.Offset})
	}
	return out, nil
}

// RewindTable implements admin.Backend: it resolves the target to offsets
// of every partition of the table's topics (or checks the explicit ones)
// and proposes one RewindTable.
func (b *Backend) RewindTable(ctx context.Context, req admin.RewindRequest) (admin.RewindResult, error) {
	if err := b.ready(); err != nil {
		return admin.RewindResult{}, err
	}
	key, err := b.tableKey(req.Table)
	if err != nil {
		return admin.RewindResult{}, err
	}
	if err := checkRewind(req); err != nil {
		return admin.RewindResult{}, err
	}
	parts := map[string]int32{} // topic -> partition count
	b.raft.FSM().Read(func(s *fsm.State) {
		for _, src := range s.Sources {
			if src.Table == key {
				parts[src.Topic] = src.Partitions
			}
		}
	})
	if len(parts) == 0 {
		return admin.RewindResult{}, fmt.Errorf("%w: table %s has no topic mapped to it now", admin.ErrConflict, req.Table)
	}
	var to []fsm.RewindPosition
	if len(req.Offsets) > 0 {
		to, err = explicitRewind(req, parts)
	} else {
		to, err = b.resolveRewind(ctx, req, parts)
	}
	if err != nil {
		return admin.RewindResult{}, err
	}
	res, err := b.operatorCommand(ctx, fsm.RewindTable{Table: key, To: to, Replace: req.Policy == admin.ReplayReplace, At: time.Now().UnixMilli(), By: admin.Caller(ctx)}, "rewound "+req.Table)
	if err != nil {
		return admin.RewindResult{}, err
	}
	out := admin.RewindResult{Index: res.Index}
	b.raft.FSM().Read(func(s *fsm.State) {
		if rw := s.Rewinds[key]; rw != nil {
			out.Rewind = rewindReport(req.Table, rw)
		}
	})
	return out, nil
}

// checkRewind validates the request's target and policy.
func checkRewind(req admin.RewindRequest) error {
	targets := 0
	for _, set := range []bool{req.Earliest, req.Latest, !req.Timestamp.IsZero(), len(req.Offsets) > 0} {
		if set {
			targets++
		}
	}
	if targets != 1 {
		return fmt.Errorf("%w: target: set exactly one of earliest, latest, timestamp or offsets", admin.ErrInvalid)
	}
	if req.Policy != admin.ReplayAppend && req.Policy != admin.ReplayReplace {
		return fmt.Errorf("%w: policy: %s: use append or replace", admin.ErrInvalid, names.Preview(req.Policy))
	}
	return nil
}

// explicitRewind checks offsets named in the request against the table's
// topics and their partition counts.
func explicitRewind(req admin.RewindRequest, parts map[string]int32) ([]fsm.RewindPosition, error) {
	var to []fsm.RewindPosition
	for i, o := range req.Offsets {
		count, ok := parts[o.Topic]
		switch {
		case !ok:
			return nil, fmt.Errorf("%w: offsets[%d].topic: %s does not flow into %s", admin.ErrInvalid, i, names.Preview(o.Topic), req.Table)
		case o.Partition < 0 || o.Partition >= count:
			return nil, fmt.Errorf("%w: offsets[%d].partition: %s has partitions 0 to %d", admin.ErrInvalid, i, o.Topic, count-1)
		case o.Offset < 0:
			return nil, fmt.Errorf("%w: offsets[%d].offset: %d is negative", admin.ErrInvalid, i, o.Offset)
		}
		to = append(to, fsm.RewindPosition{TopicPartition: ledger.TopicPartition{Topic: o.Topic, Partition: o.Partition}, Offset: o.Offset})
	}
	return to, nil
}

// resolveRewind asks Kafka for the earliest, latest or timestamp's offsets
// of every partition of the table's topics, in topic order.
func (b *Backend) resolveRewind(ctx context.Context, req admin.RewindRequest, parts map[string]int32) ([]fsm.RewindPosition, error) {
	var to []fsm.RewindPosition
	for _, topic := range slices.Sorted(maps.Keys(parts)) {
		ps := make([]int32, parts[topic])
		for i := range ps {
			ps[i] = int32(i)
		}
		var offs map[int32]int64
		var err error
		switch {
		case req.Earliest:
			offs, err = b.kafka.Offsets(ctx, topic, ps, false)
		case req.Latest:
			offs, err = b.kafka.Offsets(ctx, topic, ps, true)
		default:
			offs, err = b.kafka.OffsetsAt(ctx, topic, ps, req.Timestamp)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: resolving the rewind target of %s: %w", admin.ErrUnavailable, req.Table, err)
		}
		for _, p := range ps {
			off, ok := offs[p]
			if !ok {
				return nil, fmt.Errorf("%w: Kafka gave no offset for %s/%d", admin.ErrUnavailable, topic, p)
			}
			to = append(to, fsm.RewindPosition{TopicPartition: ledger.TopicPartition{Topic: topic, Partition: p}, Offset: off})
		}
	}
	return to, nil
}

// rewindReport describes a table's last rewind for people.
func rewindReport(table string, rw *fsm.TableRewind) status.RewindReport {
	r := status.RewindReport{Generation: rw.Gen, Policy: admin.ReplayAppend, At: time.UnixMilli(rw.At), ReplaceDone: rw.ReplaceDone}
	if rw.Replace {
		r.Policy = admin.ReplayReplace
	}
	var replayed []string
	for _, p := range rw.To {
		r.To = append(r.To, status.PartitionOffset{Topic: p.Topic, Partition: p.Partition, Offset: p.Offset})
	}
	for _, p := range rw.From {
		r.From = append(r.From, status.PartitionOffset{Topic: p.Topic, Partition: p.Partition, Offset: p.Offset})
		i := slices.IndexFunc(rw.To, func(t fsm.RewindPosition) bool { return t.TopicPartition == p.TopicPartition })
		if i >= 0 && p.Offset > rw.To[i].Offset {
			replayed = append(replayed, fmt.Sprintf("%s [%d, %d)", p.TopicPartition, rw.To[i].Offset, p.Offset))
		}
	}
	at := r.At.UTC().Format(time.RFC3339)
	if rw.By != "" {
		r.By = rw.By
		at += " by " + rw.By
	}
	switch {
	case len(replayed) == 0:
		r.Describe = fmt.Sprintf("%s was moved forward at %s (rewind %d, policy %s): the records in between are not in the table", table, at, rw.Gen, r.Policy)
	case !rw.Replace:
		r.Describe = fmt.Sprintf("%s was rewound at %s with policy append (rewind %d): offsets %s are replayed and appear twice in the table", table, at, rw.Gen, strings.Join(replayed, ", "))
	case rw.ReplaceDone:
		r.Describe = fmt.Sprintf("%s was rewound at %s with policy replace (rewind %d): %d rows from the new position on were deleted and offsets %s are replayed once", table, at, rw.Gen, rw.DeletedRows, strings.Join(replayed, ", "))
	default:
		r.Describe = fmt.Sprintf("%s was rewound at %s with policy replace (rewind %d): the committer is deleting the rows from the new position on before replaying %s", table, at, rw.Gen, strings.Join(replayed, ", "))
	}
	return r
}

// Snapshots implements admin.Backend.
func (b *Backend) Snapshots(ctx context.Context, table string) ([]admin.SnapshotInfo, error) {
	if err := b.ready(); err != nil {
		return nil, err
	}
	key, err := b.tableKey(table)
	if err != nil {
		return nil, err
	}
	tbl, err := b.catalog.LoadTable(ctx, ledger.TableIdent(key))
	if err != nil {
		return nil, fmt.Errorf("%w: table %s has no data yet: %w", admin.ErrNotFound, table, err)
	}
	cur := int64(-1)
	if s := tbl.CurrentSnapshot(); s != nil {
		cur = s.SnapshotID
	}
	var out []admin.SnapshotInfo
	for _, s := range tbl.Metadata().Snapshots() {
		si := admin.SnapshotInfo{ID: s.SnapshotID, Sequence: s.SequenceNumber, At: time.UnixMilli(s.TimestampMs),
			ManifestList: s.ManifestList, Current: s.SnapshotID == cur}
		if s.ParentSnapshotID != nil {
			si.ParentID = *s.ParentSnapshotID
		}
		if s.Summary != nil {
			si.Operation = string(s.Summary.Operation)
			si.Summary = map[string]string(s.Summary.Properties)
		}
		out = append(out, si)
	}
	return out, nil
}

// Maintain implements admin.Source.
func (b *Backend) Maintain(ctx context.Context, name string, force bool) (any, error) {
	select {
	case <-b.started:
	default:
		return nil, errors.New("the node is still joining the raft group")
	}
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return nil, fmt.Errorf("%w: table %s: use namespace.name", admin.ErrInvalid, names.Preview(name))
	}
	key := ledger.TableKey(parts)
	// Maintenance runs on the table's committer, its only writer: another
	// node asks the committer.
	var committer, addr string
	b.raft.FSM().Read(func(s *fsm.State) {
		if a, ok := s.Committers[key]; ok {
			committer = a.Node
			if m := s.Nodes[a.Node]; m != nil {
				addr = m.Admin
			}
		}
	})
	if committer != "" && committer != b.cfg.Node.ID && addr != "" {
		return b.peers.maintain(ctx, addr, name, force) // adminwire.go
	}
	res, err := b.worker.Maintain(ctx, key, force)
	switch {
	case errors.Is(err, worker.ErrUnknownTable):
		return nil, fmt.Errorf("%w: %w", admin.ErrNotFound, err)
	case errors.Is(err, worker.ErrCompactionDisabled):
		return nil, fmt.Errorf("%w: %w", admin.ErrConflict, err)
	}
	return res, err
}
