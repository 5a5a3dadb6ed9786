package iceberg

import (
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/sinks/delta"
)

// opCompaction is the floe.operation of a compaction's snapshot: rows
// moved between files, none added or removed (an upsert table's deleted
// rows purged with their delete files are not rows of the table).
const opCompaction = "compaction"

// rearrangedSince reports whether the table changed, since the version at
// the head of its Delta log, only by compactions: every snapshot of the
// current lineage after the one the head's commit id names is a
// compaction's. A sync that catches the log up is then an OPTIMIZE with
// dataChange false, not new data for a streaming reader to read again (a
// compaction whose Delta version a crash, a restart or a failover lost).
// An unknown head, a head no retained snapshot carries (expired, or a log
// restored by hand) or any other snapshot on the way is a data change:
// a reader re-reading rows is recoverable, one missing rows is not.
func rearrangedSince(tbl *table.Table, head *delta.CommitInfo) bool {
	if head == nil || head.CommitID == "" {
		return false
	}
	meta := tbl.Metadata()
	steps := 0
	for s := tbl.CurrentSnapshot(); s != nil; steps++ {
		if carries(s, head.CommitID) {
			return steps > 0
		}
		if s.Summary == nil || s.Summary.Properties["floe.operation"] != opCompaction || s.ParentSnapshotID == nil {
			return false
		}
		s = meta.SnapshotByID(*s.ParentSnapshotID)
	}
	return false
}

// carries reports whether snapshot s is the one a Delta commit id names:
// an append's or a compaction's floe.commit-id, or a sync's "sync-<id>".
func carries(s *table.Snapshot, commitID string) bool {
	if id, ok := strings.CutPrefix(commitID, syncCommitPrefix); ok {
		return id == strconv.FormatInt(s.SnapshotID, 10)
	}
	return s.Summary != nil && s.Summary.Properties[PropCommitID] == commitID
}

// syncCommitPrefix starts the commit id of a Delta version that syncs the
// log with a snapshot: the snapshot's id follows.
const syncCommitPrefix = "sync-"
