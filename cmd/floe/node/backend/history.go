package backend

import (
	"context"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
)

// SampleHistory records every table's freshness, committed rows and lag
// in the node's history now and then every status.HistoryInterval until
// ctx ends. It reads the replicated state and the node's runtime status
// only (no catalog load), so a sample costs a read lock.
func (b *Backend) SampleHistory(ctx context.Context) {
	tick := time.NewTicker(status.HistoryInterval)
	defer tick.Stop()
	for {
		now := time.Now()
		runtime, _ := b.worker.Status().Snapshot()
		var samples map[string]status.Sample
		b.raft.FSM().Read(func(s *fsm.State) { samples = samplesOf(s, runtime, now) })
		b.history.Record(now, samples)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// samplesOf is each table's sample at now, by display name: freshness as
// the report computes it (now minus the newest committed record's
// timestamp), committed rows, and lag as this node sees it: a partition it
// reads against the high watermark its reader saw, another against what is
// recorded in the ledger. Tables with no committed record and dead-letter
// tables are left out.
func samplesOf(s *fsm.State, runtime map[string]status.TableStatus, now time.Time) map[string]status.Sample {
	out := map[string]status.Sample{}
	for key, t := range s.Tables {
		if base := trimDLQ(key); base != key {
			if _, isDLQ := s.Tables[base]; isDLQ {
				continue
			}
		}
		if t.NewestRecordTS <= 0 {
			continue
		}
		var lag int64
		rt := runtime[key]
		for tp, o := range s.Ledger.Offsets[key] {
			end := o.End
			if ps, ok := rt.Partitions[tp]; ok && ps.HighWatermark > end {
				end = ps.HighWatermark
			}
			lag += max(0, end-o.Committed)
		}
		out[ledger.DisplayName(key)] = status.Sample{FreshnessSec: now.Sub(time.UnixMilli(t.NewestRecordTS)).Seconds(), Rows: t.Rows, Lag: lag}
	}
	return out
}

// Samples returns a table's samples over the last hour, oldest first: the
// console's charts (admin.HistorySource).
func (b *Backend) Samples(table string) []status.Sample { return b.history.Samples(table) }
