package backend

import (
	"maps"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
)

// TestSamplesOf: a sample holds each table's freshness as the report
// computes it, its committed rows and its lag (a partition read here
// against its reader's high watermark, another against the ledger's end),
// by display name, without dead-letter tables or tables that committed no
// record.
func TestSamplesOf(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	ms := func(ago time.Duration) int64 { return now.Add(-ago).UnixMilli() }
	s := &fsm.State{Tables: map[string]*fsm.Table{
		"db\x1forders":             {NewestRecordTS: ms(90 * time.Second), Rows: 700},
		fsm.DLQKey("db\x1forders"): {NewestRecordTS: ms(time.Second)},
		"db\x1fempty":              {},
		"db\x1fmy_dlq":             {NewestRecordTS: ms(5 * time.Second)}, // named _dlq, but no table db.my
		"ops\x1fteam\x1fclicks":    {NewestRecordTS: ms(2 * time.Second), Rows: 3},
	}, Ledger: &ledger.Ledger{Offsets: map[string]map[string]*ledger.Offsets{
		"db\x1forders": {"orders/0": {Committed: 400, End: 420}, "orders/1": {Committed: 300, End: 300}},
	}}}
	runtime := map[string]status.TableStatus{"db\x1forders": {Partitions: map[string]*status.PartitionStatus{
		"orders/1": {HighWatermark: 350}, // read here: its reader saw 50 more in Kafka
	}}}
	want := map[string]status.Sample{
		"db.orders":       {FreshnessSec: 90, Rows: 700, Lag: 20 + 50},
		"db.my_dlq":       {FreshnessSec: 5},
		"ops.team.clicks": {FreshnessSec: 2, Rows: 3},
	}
	if got := samplesOf(s, runtime, now); !maps.Equal(got, want) {
		t.Fatalf("samples %v, want %v", got, want)
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
