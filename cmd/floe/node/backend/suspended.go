package backend

import (
	"context"
	"sync"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/status"
)

// suspendedElsewhere asks the other members' admin endpoints where they
// have the table suspended. Members that do not answer in time are left out.
func (b *Backend) suspendedElsewhere(ctx context.Context, table string) []status.SuspendedRecord {
	var addrs []string
	b.raft.FSM().Read(func(s *fsm.State) {
		for id, m := range s.Nodes {
			if id != b.cfg.Node.ID && m.Admin != "" {
				addrs = append(addrs, m.Admin)
			}
		}
	})
	var (
		mu  sync.Mutex
		out []status.SuspendedRecord
		wg  sync.WaitGroup
	)
	for _, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			rep, err := b.peers.fetch(fctx, addr) // adminwire.go
			if err != nil {
				b.log.Warn("resume: reading a member's status", "admin", addr, "err", err)
				return
			}
			for _, tr := range rep.Tables {
				if at := tr.SuspendedAt; at != nil && tr.Table == table {
					mu.Lock()
					out = append(out, status.SuspendedRecord{Topic: at.Topic, Partition: at.Partition, Offset: at.Offset, Error: at.Error})
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return out
}
