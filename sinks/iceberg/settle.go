package iceberg

import (
	"context"
	"time"

	"github.com/floe-io/floe/internal/ledger"
)

// Settle brings what follows table key's commits level with its committed
// state, as committer: the Delta log of its dead-letter table, which is
// mirrored after each commit (dlqdelta.go). Without it a crash, a restart
// or a failover between a commit and its mirror left the mirror one
// commit behind until the table's next commit, which a quiet table may
// not make for hours. The commit loop calls it every round; once level it
// costs a map lookup until a mirror fails or the process restarts.
func (s *Sink) Settle(ctx context.Context, key string, committer ledger.Assignment, at time.Time) error {
	d := s.delta
	if d == nil || !s.writesDelta(key) || d.isLevel(key) {
		return nil
	}
	if err := s.mirrorDLQ(ctx, key, committer, at); err != nil {
		return err
	}
	d.setLevel(key, true)
	return nil
}

func (d *deltaSide) isLevel(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.level[key]
}

func (d *deltaSide) setLevel(key string, level bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if level {
		d.level[key] = true
		return
	}
	delete(d.level, key)
}
