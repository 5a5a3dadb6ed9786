package node

import (
	"context"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/ledger"
	"github.com/floe-io/floe/status"
)

// sampleFreshness records every table's freshness in the node's history
// now and then every status.HistoryInterval until ctx ends. It reads the
// replicated state only (no catalog load), so a sample costs a read lock.
func (n *Node) sampleFreshness(ctx context.Context) {
	tick := time.NewTicker(status.HistoryInterval)
	defer tick.Stop()
	for {
		now := time.Now()
		var fresh map[string]float64
		n.raft.FSM().Read(func(s *fsm.State) { fresh = freshnessOf(s, now) })
		n.history.Record(now, fresh)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// freshnessOf is each table's freshness at now, by display name, computed
// as the report computes it (now minus the newest committed record's
// timestamp); tables with no committed record and dead-letter tables are
// left out.
func freshnessOf(s *fsm.State, now time.Time) map[string]float64 {
	out := map[string]float64{}
	for key, t := range s.Tables {
		if base := trimDLQ(key); base != key {
			if _, isDLQ := s.Tables[base]; isDLQ {
				continue
			}
		}
		if t.NewestRecordTS > 0 {
			out[ledger.DisplayName(key)] = now.Sub(time.UnixMilli(t.NewestRecordTS)).Seconds()
		}
	}
	return out
}

// Freshness returns a table's freshness samples over the last hour, oldest
// first: the console's chart (admin.FreshnessSource).
func (n *Node) Freshness(table string) []status.Sample { return n.history.Freshness(table) }
