package delta

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCleanup publishes a version a day for 25 days (checkpoints at 10
// and 20) and cleans up with a retention that reaches back to day N: the
// newest checkpoint committed before then stays with everything after it.
func TestCleanup(t *testing.T) {
	day0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name      string
		cutoffDay int   // now - retention falls on this day
		firstKept int64 // the oldest version left; 0: nothing deleted
		deleted   int
	}{
		{"before the first checkpoint", 8, 0, 0},
		{"between the checkpoints", 15, 10, 10},
		{"after the second checkpoint", 23, 20, 21},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tbl := testTable("file://"+dir, 1)
			l := openLog(t, LocalStore(dir))
			for seq := int64(1); seq <= 25; seq++ {
				cm := appendCommit(tbl, seq, dataFile(t, tbl.Location, 1, "eu", seq, seq))
				cm.At = day0.Add(time.Duration(seq-1) * 24 * time.Hour)
				if _, err := l.Publish(context.Background(), cm); err != nil {
					t.Fatal(err)
				}
			}
			l.opts.Now = func() time.Time { return day0.Add(time.Duration(c.cutoffDay)*24*time.Hour + DefaultLogRetention) }
			n, err := l.Cleanup(context.Background(), DefaultLogRetention)
			if err != nil || n != c.deleted {
				t.Fatalf("deleted %d, %v; want %d", n, err, c.deleted)
			}
			for v := int64(0); v < 25; v++ {
				_, err := os.Stat(filepath.Join(dir, commitName(v)))
				if exists := err == nil; exists != (v >= c.firstKept) {
					t.Errorf("version %d exists: %v", v, exists)
				}
			}
			r := openLog(t, LocalStore(dir))
			if txn, _ := r.Txn(tableID); r.Version() != 24 || txn != 25 || len(r.Files()) != 25 {
				t.Errorf("after cleanup: version %d txn %d files %d", r.Version(), txn, len(r.Files()))
			}
		})
	}
}
