//go:build soak && long

package e2e

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// TestSoak runs a three-node fleet for an hour (FLOE_SOAK_DURATION) at
// steady load (240 records/s over 24 partitions, 1 s commits) with one
// fault a minute (FLOE_SOAK_FAULT_EVERY), drawn by the seeded schedule
// from the chaos faults that keep a 3-node group whole: kill and restart
// a node, the leader or a committer, SIGSTOP one past the failure
// timeout, step a committer's wall clock minutes forward or back, fill a
// node's Raft disk, take the Glue mirror down or edit it by hand, and
// throttle S3
// when the warehouse is on S3. Every running node's RSS, goroutines, open
// files and Raft directory are sampled from outside every 30 s
// (soak_sample_test.go). One node, the observed one, is never killed, so
// it lives through every fault; over the last two thirds of the run its
// figures must end flat: the median of the window's last 5 minutes at
// most 5% above that of its first 5 minutes. At the end every produced
// (partition, offset) must be in its table once. The figures are logged
// and, with FLOE_SOAK_REPORT, written as markdown for docs/benchmarks.md.
//
// It is not in make test-long (tag soak): `make soak` runs it.
func TestSoak(t *testing.T) {
	dur := envDuration(t, "FLOE_SOAK_DURATION", time.Hour)
	every := envDuration(t, "FLOE_SOAK_FAULT_EVERY", time.Minute)
	seed := chaosSeed(t)
	t.Logf("soak seed %d, duration %s, a fault every %s", seed, dur, every)
	c := &chaos{rng: rand.New(rand.NewPCG(seed, seed)), counts: map[string]int{}}
	f := newFleet(t)
	c.f = f
	bin, err := clockBinary() // chaos_clock_test.go
	if err != nil {
		t.Fatal(err)
	}
	f.bin = bin
	f.useSmallDisks() // chaos_disk_test.go
	c.mirror = f.addMirror()
	c.s3 = f.addS3Throttle()
	nodes := f.startNew(3, 3, "n", false)
	observed := nodes[0]
	f.settle(2 * time.Minute)
	p := f.startProducer(1)
	w := f.watch(2 * time.Second)
	f.waitCommitted(time.Minute)
	s := f.sample(30 * time.Second)
	start := time.Now()
	f.event("soak for %s, observing %s", dur, observed.id)
	for next := start.Add(every); next.Before(start.Add(dur)); next = next.Add(every) {
		time.Sleep(time.Until(next)) // the schedule: one fault a minute is the load, not a wait on a condition
		c.soakStep(observed)
		f.settle(2 * time.Minute)
	}
	time.Sleep(time.Until(start.Add(dur))) // the last stretch without a fault belongs to the run
	samples := s.stop()
	f.event("soak over: %v", c.counts)
	f.verify(p.stop(), 4*time.Minute)
	w.stop()
	if fr, per := w.maxFreshness(); fr > 0 {
		t.Logf("freshness: max %.1fs; %s", fr, per)
	}
	winStart := start.Add(dur / 3)
	rep := soakReport(samples, observed.id, winStart, start.Add(dur), 5*time.Minute)
	t.Log("\n" + rep.markdown(seed, dur, every, c.counts))
	if path := os.Getenv("FLOE_SOAK_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(rep.markdown(seed, dur, every, c.counts)), 0o644); err != nil {
			t.Errorf("writing %s: %v", path, err)
		}
		if err := os.WriteFile(path+".csv", []byte(soakCSV(samples)), 0o644); err != nil {
			t.Errorf("writing %s.csv: %v", path, err)
		}
	}
	for _, g := range rep.failures {
		t.Error(g)
	}
}

// soakStep does one fault that leaves the three voters whole afterwards;
// the observed node is paused but never killed.
func (c *chaos) soakStep(observed *fleetNode) {
	f := c.f
	acts := []string{"kill", "kill-leader", "kill-committer", "pause", "mirror-down", "mirror-edit", "clock-jump"}
	if c.s3 != nil {
		acts = append(acts, "s3-throttle")
	}
	if f.smallDisks {
		acts = append(acts, "disk-full")
	}
	act := pick(c.rng, acts)
	c.counts[act]++
	var others []*fleetNode
	for _, n := range f.running() {
		if n != observed {
			others = append(others, n)
		}
	}
	switch act {
	case "kill":
		c.killRestart(pick(c.rng, others), "")
	case "kill-leader", "kill-committer":
		target := c.roleHolder(act)
		if target == nil || target == observed {
			// The observed node holds that role: lose it by a pause
			// instead, which moves the role without a restart.
			c.pauseNode(observed)
			return
		}
		c.killRestart(target, act)
	case "pause":
		c.pauseNode(pick(c.rng, f.running()))
	case "mirror-down":
		c.mirrorDown()
	case "mirror-edit":
		c.mirrorEdit()
	case "s3-throttle":
		c.s3ThrottleStep()
	case "clock-jump":
		c.clockJump()
	case "disk-full":
		c.diskFull()
	}
}

// pauseNode SIGSTOPs a node past the failure timeout and continues it.
func (c *chaos) pauseNode(n *fleetNode) {
	d := fleetFailureTimeout + time.Duration(1000+c.rng.IntN(2000))*time.Millisecond
	c.f.event("SIGSTOP %s for %s", n.id, d)
	c.f.pause(n)
	time.Sleep(d) // the fault: stopped that long, past the failure timeout
	c.f.resume(n)
	c.f.event("SIGCONT %s", n.id)
}
