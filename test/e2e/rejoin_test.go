package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestDrainedNodeRestartsAndRejoins: a node drained on SIGTERM leaves the
// group; restarted on its data dir it rejoins (it used to wait outside the
// configuration forever while the group ran a voter short), and a drain
// right after that rejoin completes too. The node is drained and restarted
// twice, the second drain as soon as the restart returns.
func TestDrainedNodeRestartsAndRejoins(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, _ := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "cfg_topic")})
	nodes, cfgs := startTrio(t, kc.ListenAddrs())
	other, victim := nodes[0], nodes[2]
	for round := 1; round <= 2; round++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := victim.Drain(ctx)
		cancel()
		if err != nil {
			t.Fatalf("drain %d of %s: %v", round, victim.ID(), err)
		}
		if err := victim.Stop(); err != nil {
			t.Fatalf("stopping %s after drain %d: %v", victim.ID(), round, err)
		}
		wait.Until(t, 30*time.Second, victim.ID()+" gone from the group", func() error {
			for _, m := range other.Members() {
				if m.ID == victim.ID() {
					return fmt.Errorf("still a member: %+v", m)
				}
			}
			return nil
		})
		ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
		n, err := testnode.Start(ctx, cfgs[2], testnode.Logger(t), testnode.Options{NoSync: true}) // returns once joined
		cancel()
		if err != nil {
			t.Fatalf("restarting %s on its data dir after drain %d: %v", victim.ID(), round, err)
		}
		t.Cleanup(func() { _ = n.Stop() })
		victim = n
	}
	wait.Until(t, time.Minute, "three voters again", func() error {
		voters := 0
		for _, m := range other.Members() {
			if (m.Role == "leader" || m.Role == "voter") && m.Healthy {
				voters++
			}
		}
		if voters != 3 {
			return fmt.Errorf("%d healthy voters: %+v", voters, other.Members())
		}
		return nil
	})
}
