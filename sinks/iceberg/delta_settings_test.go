package iceberg

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/floe-io/floe/sinks/delta"
)

// checkpoints lists the versions of the table's Delta checkpoints.
func (c *deltaCase) checkpoints() []string {
	c.t.Helper()
	names, _ := filepath.Glob(filepath.Join(c.root(), "_delta_log", "*.checkpoint.parquet"))
	var out []string
	for _, n := range names {
		out = append(out, filepath.Base(n)[:20])
	}
	return out
}

// intervals lists the delta.checkpointInterval of every metaData action
// in the log, in version order.
func (c *deltaCase) intervals() []string {
	c.t.Helper()
	names, _ := filepath.Glob(filepath.Join(c.root(), "_delta_log", "*.json"))
	var out []string
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			c.t.Fatal(err)
		}
		for _, line := range splitLines(b) {
			var a struct {
				MetaData *struct {
					Configuration map[string]string `json:"configuration"`
				} `json:"metaData"`
			}
			if json.Unmarshal(line, &a) == nil && a.MetaData != nil {
				out = append(out, a.MetaData.Configuration["delta.checkpointInterval"])
			}
		}
	}
	return out
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := slices.Index(b, '\n')
		if i < 0 {
			return append(out, b)
		}
		out, b = append(out, b[:i]), b[i+1:]
	}
	return out
}

// cps names checkpoint versions as checkpoints lists them.
func cps(vs ...int) []string {
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%020d", v))
	}
	return out
}

// TestDeltaCheckpointIntervalSetting: the table's checkpoint_interval
// decides where the committer writes checkpoints and is the log's
// delta.checkpointInterval property; changed on a table whose log is open,
// the next version takes it and says it in a metaData action.
func TestDeltaCheckpointIntervalSetting(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, then int64 // the setting for versions 0-3 and for 4-10
		checkpoints []string
		intervals   []string
	}{
		{"default", 0, 0, cps(10), []string{"10"}},
		{"3", 3, 3, cps(3, 6, 9), []string{"3"}},
		{"changed from the default to 2", 0, 2, cps(4, 6, 8, 10), []string{"10", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newDeltaCase(t, true)
			for i := range 11 {
				n := tc.first
				if i >= 4 {
					n = tc.then
				}
				c.settings.Store(&delta.Settings{CheckpointInterval: n})
				c.record(1)
				if err := c.commit(); err != nil {
					t.Fatal(err)
				}
			}
			if got := c.checkpoints(); !slices.Equal(got, tc.checkpoints) {
				t.Errorf("checkpoints at %v, want %v", got, tc.checkpoints)
			}
			if got := c.intervals(); !slices.Equal(got, tc.intervals) {
				t.Errorf("delta.checkpointInterval of the metaData actions %v, want %v", got, tc.intervals)
			}
			c.check()
		})
	}
}

// TestDeltaLogRetentionSetting: the table's log_retention decides which
// log entries orphan cleanup deletes: two hours later, a 1h retention
// deletes the versions before the checkpoint (10); the default (30 days)
// keeps them all.
func TestDeltaLogRetentionSetting(t *testing.T) {
	for _, tc := range []struct {
		name      string
		retention time.Duration
		left      int
	}{
		{"default", 0, 12},
		{"1h", time.Hour, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newDeltaCase(t, true)
			for range 12 {
				c.record(1)
				if err := c.commit(); err != nil {
					t.Fatal(err)
				}
			}
			c.settings.Store(&delta.Settings{LogRetention: tc.retention})
			c.opts.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
			c.restart()
			if _, _, err := c.s.CleanOrphans(c.ctx, c.spec.Key, time.Hour, nil, c.a); err != nil {
				t.Fatal(err)
			}
			logs, _ := filepath.Glob(filepath.Join(c.root(), "_delta_log", "*.json"))
			if len(logs) != tc.left {
				t.Fatalf("%d log files after cleanup, want %d: %v", len(logs), tc.left, logs)
			}
		})
	}
}
