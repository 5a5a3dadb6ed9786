package backend

import (
	"context"
	"sync"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/status"
)

// peerReportTimeout bounds how long a cluster-wide report waits for each
// peer: a member that does not answer in time is named as missing rather
// than holding the console or the CLI.
const peerReportTimeout = 3 * time.Second

// ClusterReport is the cluster-wide status: this node's report joined with
// every other member's (status.MergeCluster), fetched in parallel from
// their admin APIs. What each node did for a table (consumed, written,
// compacted, metadata uploaded, object requests) is summed, so the figures
// are the same on whichever node serves them.
func (b *Backend) ClusterReport(ctx context.Context) (status.Report, error) {
	local, err := b.Report(ctx)
	if err != nil {
		return status.Report{}, err
	}
	peers := map[string]string{} // id -> admin address
	b.raft.FSM().Read(func(s *fsm.State) {
		for id, m := range s.Nodes {
			if id != b.cfg.Node.ID {
				peers[id] = m.Admin
			}
		}
	})
	var (
		mu      sync.Mutex
		reps    []status.Report
		missing = map[string]string{}
		wg      sync.WaitGroup
	)
	for id, addr := range peers {
		if addr == "" {
			missing[id] = "no admin address known"
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fctx, cancel := context.WithTimeout(ctx, peerReportTimeout)
			defer cancel()
			rep, err := b.peers.fetch(fctx, addr) // adminwire.go
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				missing[id] = err.Error()
				return
			}
			reps = append(reps, rep)
		}()
	}
	wg.Wait()
	return status.MergeCluster(local, reps, missing), nil
}
