package backend

import (
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/status"
	"time"
)

// Members joins the Raft configuration with the replicated assignments for
// status.
func (b *Backend) Members() []status.MemberReport {
	parts, commits := map[string]int{}, map[string]int{}
	b.raft.FSM().Read(func(s *fsm.State) {
		for _, a := range s.Ledger.Assignments {
			parts[a.Node]++
		}
		for _, a := range s.Committers {
			commits[a.Node]++
		}
	})
	var out []status.MemberReport
	for _, m := range b.raft.Members() {
		role := "nonvoter"
		switch {
		case m.Leader:
			role = "leader"
		case m.Voter:
			role = "voter"
		}
		out = append(out, status.MemberReport{
			ID: m.ID, Role: role, Zone: m.Zone, Version: m.Version, Healthy: m.Healthy, Draining: m.Draining, UpgradeRequired: m.UpgradeRequired, StorageFailing: m.StorageFailing,
			ClockSkewed: m.ClockSkewed, ClockOffset: m.ClockOffset.Round(time.Second).Seconds(),
			Partitions: parts[m.ID], Committers: commits[m.ID], Unreachable: m.Unreachable.Seconds(),
		})
	}
	return out
}
