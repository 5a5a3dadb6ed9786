package backend

import (
	"maps"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/status"
)

// catalogReports fills a table's catalog sync status: the replicated record
// (every node) joined with this node's runtime status (the committer's).
func (b *Backend) catalogReports(key string, now time.Time) []status.CatalogReport {
	if b.catalogSync == nil {
		return nil
	}
	var (
		cur        string
		lastCommit int64
		synced     = map[string]fsm.SyncRecord{}
	)
	b.raft.FSM().Read(func(s *fsm.State) {
		if t, ok := s.Tables[key]; ok {
			cur, lastCommit = t.MetadataLocation, t.LastCommitAt
			maps.Copy(synced, t.Synced)
		}
	})
	if cur == "" {
		return nil
	}
	runtime := b.catalogSync.Status()[key]
	var out []status.CatalogReport
	for _, name := range b.catalogSync.Mirroring(b.worker.Formats(key)) {
		rec := synced[name]
		st, local := runtime[name]
		cr := status.CatalogReport{Catalog: name, MetadataLocation: rec.MetadataLocation, InSync: rec.MetadataLocation == cur}
		if rec.At > 0 {
			cr.LastSync = time.UnixMilli(rec.At)
		}
		if !cr.InSync {
			switch {
			case local && !st.BehindSince.IsZero():
				cr.LagSec = now.Sub(st.BehindSince).Seconds()
			case lastCommit > 0:
				cr.LagSec = now.Sub(time.UnixMilli(lastCommit)).Seconds()
			}
		}
		if local {
			cr.LastError, cr.LastErrorAt, cr.Syncs, cr.Failures = st.LastError, st.LastErrorAt, st.Syncs, st.Failures
		}
		out = append(out, cr)
	}
	return out
}
