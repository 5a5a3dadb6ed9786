package node

import (
	"maps"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/status"
)

// TestFreshnessOf: a sample holds each table's freshness as the report
// computes it, by display name, without dead-letter tables or tables that
// committed no record.
func TestFreshnessOf(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ms := func(ago time.Duration) int64 { return now.Add(-ago).UnixMilli() }
	s := &fsm.State{Tables: map[string]*fsm.Table{
		"db\x1forders":             {NewestRecordTS: ms(90 * time.Second)},
		fsm.DLQKey("db\x1forders"): {NewestRecordTS: ms(time.Second)},
		"db\x1fempty":              {},
		"db\x1fmy_dlq":             {NewestRecordTS: ms(5 * time.Second)}, // named _dlq, but no table db.my
		"ops\x1fteam\x1fclicks":    {NewestRecordTS: ms(2 * time.Second)},
	}}
	want := map[string]float64{"db.orders": 90, "db.my_dlq": 5, "ops.team.clicks": 2}
	if got := freshnessOf(s, now); !maps.Equal(got, want) {
		t.Fatalf("freshness %v, want %v", got, want)
	}
}

// TestTableLag: a table's lag is its partitions' records summed and the
// largest lag in time.
func TestTableLag(t *testing.T) {
	for _, c := range []struct {
		name    string
		parts   []status.PartitionReport
		records int64
		sec     float64
	}{
		{"no partitions", nil, 0, 0},
		{"caught up", []status.PartitionReport{{Lag: 0}, {Lag: 0}}, 0, 0},
		{"behind", []status.PartitionReport{{Lag: 10, LagSec: 3}, {Lag: 0}, {Lag: 5, LagSec: 7.5}}, 15, 7.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r, s := tableLag(c.parts); r != c.records || s != c.sec {
				t.Fatalf("lag %d records, %vs; want %d, %vs", r, s, c.records, c.sec)
			}
		})
	}
}
