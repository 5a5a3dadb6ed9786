package node

import (
	"maps"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
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
