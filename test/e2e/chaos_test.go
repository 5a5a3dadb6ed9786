//go:build long

package e2e

import (
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/sinks/glue/gluetest"
)

// TestChaos runs five real floe processes forming one Raft group while a
// producer writes to 24 partitions, and every 2-5 s does one random thing
// an operator or the infrastructure does to a fleet: SIGKILL a node (any,
// the leader, a table's committer) and restart it, SIGSTOP one past the
// failure timeout and let it continue (a zombie whose writes must be
// fenced), add a join-only node, drain one with SIGTERM (exit code 0) and
// retire it, or drain one and restart it on its data dir (it must rejoin;
// half the time it is drained again as soon as it is ready, and restarted
// again). A transactional producer commits and aborts batches interleaved
// with plain records on a fourth topic throughout (chaos_txn_test.go).
// Every node mirrors the tables to a fake Glue that the schedule takes
// down for 1-6 s or edits by hand; each time every table's entry must move
// on within 5 s of the fault's end (chaos_mirror_test.go). The nodes run a
// build whose wall clock the schedule steps minutes forward or back on a
// committer (chaos_clock_test.go): every table must commit again within
// 5 s of the step's end and no snapshot may be stamped in the future.
// At most one node is down at a time and at least three run,
// so a majority of voters always survives; after every action the test
// waits until the fleet has settled (all members healthy, all work on
// running nodes): a fleet that does not heal fails the test. At the end
// every produced (partition, offset) must be in its table exactly once, read
// back without Floe, every committed offset of the transactional topic once
// and none of its aborted ones, and no status observation may show a
// committed offset moving backwards.
//
// FLOE_CHAOS_DURATION (default 45s), FLOE_CHAOS_SEED replays a schedule
// (the cluster's own timing still varies), FLOE_CHAOS_ACTIONS limits the
// actions (comma-separated: kill, pause, kill-leader, kill-committer, add,
// drain, drain-restart, mirror-down, mirror-edit, clock-jump, s3-throttle, rotate-certs, rotate-ca) to hammer one failure class, plus the harness variables in
// cluster_harness_test.go (real Kafka, S3 warehouse, kept logs, report).
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end cluster chaos")
	}
	runChaos(t, 45*time.Second, false)
}

// TestChaosTLS is TestChaos with the fleet under mutual TLS, one
// certificate per node, and two more faults in the schedule: every node's
// certificate re-issued, and the CA rotated (the new CA added to every
// bundle, the certificates re-issued from it, the old CA dropped), all
// while the nodes run (chaos_tls_test.go). Its default duration is 30 s.
func TestChaosTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end cluster chaos under mutual TLS")
	}
	runChaos(t, 30*time.Second, true)
}

// runChaos runs the chaos schedule for dur (FLOE_CHAOS_DURATION overrides
// it), with the fleet under mutual TLS when tls is set.
func runChaos(t *testing.T, dur time.Duration, tls bool) {
	dur = envDuration(t, "FLOE_CHAOS_DURATION", dur)
	seed := chaosSeed(t)
	t.Logf("chaos seed %d (replay with FLOE_CHAOS_SEED=%d), duration %s", seed, seed, dur)
	c := &chaos{rng: rand.New(rand.NewPCG(seed, seed)), counts: map[string]int{}}
	if s := os.Getenv("FLOE_CHAOS_ACTIONS"); s != "" {
		c.only = map[string]bool{}
		for _, a := range strings.Split(s, ",") {
			c.only[strings.TrimSpace(a)] = true
		}
		t.Logf("only actions %v", s)
	}
	f := newFleet(t)
	c.f, f.extra["seed"] = f, seed
	bin, err := clockBinary() // chaos_clock_test.go: a wall clock the schedule can step
	if err != nil {
		t.Fatal(err)
	}
	f.bin = bin
	f.useSmallDisks() // chaos_disk_test.go: disk-full needs a file system per node
	if tls {
		c.tls = f.enableTLS() // chaos_tls_test.go
	}
	f.writeBothFormats(f.topics[0]) // a Delta log beside Iceberg under the same faults (cluster_delta_test.go)
	for _, tp := range f.topics {
		// Snapshot expiry within the run: a clock step's maintenance
		// (chaos_clock_test.go) then commits an expiry too.
		if f.tableOpts[tp] == nil {
			f.tableOpts[tp] = map[string]any{}
		}
		f.tableOpts[tp]["snapshot_max_count"] = 20
	}
	txnTopic := f.addTxnTopic() // chaos_txn_test.go
	c.mirror = f.addMirror()    // chaos_mirror_test.go
	c.s3 = f.addS3Throttle()    // chaos_s3_test.go; nil unless the warehouse is on S3
	f.startNew(5, 5, "n", false)
	f.settle(2 * time.Minute)
	p := f.startProducer(3) // 720 records/s over 24 partitions
	tl := f.startTxnLoad(txnTopic)
	w := f.watch(500 * time.Millisecond)
	f.waitCommitted(time.Minute)
	f.event("chaos for %s", dur)

	end := time.Now().Add(dur)
	for time.Now().Before(end) {
		// The fault schedule: 2-5 s of load between faults is the chaos, not a wait.
		time.Sleep(time.Duration(2000+c.rng.IntN(3000)) * time.Millisecond)
		c.step()
		f.settle(90 * time.Second)
	}
	f.event("chaos over: %v", c.counts)
	if c.tls != nil {
		c.tls.checkEnforced(f, c.counts["rotate-certs"]+c.counts["rotate-ca"] > 0)
	}
	hwm := tl.stop()
	f.verify(p.stop(), 4*time.Minute)
	f.verifyTxn(tl, hwm, time.Minute)
	f.verifyMirror(c.mirror)
	w.stop()
}

// chaosSeed is FLOE_CHAOS_SEED, or a new seed; a failed test names it.
func chaosSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FLOE_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("FLOE_CHAOS_SEED: %v", err)
		}
		seed = v
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chaos seed was %d (replay with FLOE_CHAOS_SEED=%d)", seed, seed)
		}
	})
	return seed
}

// envDuration is the duration in the environment variable name, def
// without it.
func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

type chaos struct {
	f      *fleet
	rng    *rand.Rand
	counts map[string]int
	only   map[string]bool // FLOE_CHAOS_ACTIONS; nil: all
	mirror *gluetest.Server
	tls    *fleetTLS   // nil: plaintext internal ports
	s3     *s3Throttle // nil: the warehouse is not on S3
}

// step does one random action and returns once it is over (the node is
// back or gone).
func (c *chaos) step() {
	f := c.f
	run := f.running() // sorted by id: the seed picks the same positions
	acts := []string{"kill", "pause", "kill-leader", "kill-committer", "mirror-down", "mirror-edit", "clock-jump"}
	if len(run) < 7 {
		acts = append(acts, "add")
	}
	if len(run) > 3 { // a drain retires the node: never below three
		acts = append(acts, "drain", "drain-restart")
	}
	if c.tls != nil {
		acts = append(acts, "rotate-certs", "rotate-ca")
	}
	if c.s3 != nil {
		acts = append(acts, "s3-throttle")
	}
	if c.f.smallDisks {
		acts = append(acts, "disk-full")
	}
	if c.only != nil {
		acts = slices.DeleteFunc(acts, func(a string) bool { return !c.only[a] })
		if len(acts) == 0 {
			acts = []string{"pause"} // the filter allows nothing possible now
		}
	}
	act := pick(c.rng, acts)
	c.counts[act]++
	switch act {
	case "kill":
		c.killRestart(pick(c.rng, run), "")
	case "kill-leader":
		_, ln, err := f.leaderStatus()
		if err != nil { // the fleet settled a moment ago: a transient answer
			f.event("no leader found (%v): killing a random node instead", err)
			ln = pick(c.rng, run)
		}
		c.killRestart(ln, "the leader")
	case "kill-committer":
		topic := pick(c.rng, f.topics)
		rep, _, err := f.status()
		tr, _ := tableReport(rep, tableOf(topic))
		n := f.node(tr.Committer)
		if err != nil || n == nil {
			f.event("committer of %s not found (%q, %v): killing a random node instead", tableOf(topic), tr.Committer, err)
			n = pick(c.rng, run)
		}
		c.killRestart(n, "committer of "+tableOf(topic))
	case "pause":
		// Longer than the failure timeout: the others take its work with
		// higher epochs while it still believes it holds it.
		n := pick(c.rng, run)
		d := fleetFailureTimeout + time.Duration(1000+c.rng.IntN(2000))*time.Millisecond
		f.event("SIGSTOP %s for %s", n.id, d)
		f.pause(n)
		time.Sleep(d) // the fault: stopped that long, past the failure timeout; no condition to wait on
		f.resume(n)
		f.event("SIGCONT %s", n.id)
	case "add":
		n := f.startNew(1, 0, "n", false)[0]
		f.event("started %s (join only)", n.id)
	case "drain":
		n := pick(c.rng, run)
		c.drain(n)
		f.remove(n)
		f.event("%s is retired", n.id)
	case "drain-restart":
		c.drainRestart(pick(c.rng, run))
	case "mirror-down":
		c.mirrorDown()
	case "mirror-edit":
		c.mirrorEdit()
	case "rotate-certs":
		c.tls.reissue(f, "")
	case "rotate-ca":
		c.tls.rotateCA(f)
	case "s3-throttle":
		c.s3ThrottleStep()
	case "clock-jump":
		c.clockJump()
	case "disk-full":
		c.diskFull()
	}
}

// drain SIGTERMs a node and checks that it drained: exit code 0 and its
// drain completed (it left the group).
func (c *chaos) drain(n *fleetNode) {
	f, t := c.f, c.f.t
	rep, _, _ := f.status()
	role := ""
	if rep.Leader == n.id {
		role = " (the leader)"
	}
	f.event("SIGTERM %s%s: drain", n.id, role)
	code, took, err := f.terminate(n, fleetDrainTimeout+15*time.Second)
	switch {
	case err != nil:
		t.Errorf("drain: %v", err)
	case code != 0:
		t.Errorf("drain: %s exited with code %d after SIGTERM, want 0", n.id, code)
	case !strings.Contains(f.incarnationLog(n), "drained and left the group"):
		t.Errorf("drain: %s exited without completing its drain (no 'drained and left the group' in its log)", n.id)
	}
	f.event("%s exited %d after %.1fs", n.id, code, took.Seconds())
}

// drainRestart drains a node and restarts it on its data dir: having left
// the group, it must rejoin (the settle after the step requires every
// running node to be a healthy member). Half the time it is drained again
// as soon as it is ready, and restarted once more: a drain right after a
// rejoin must complete too.
func (c *chaos) drainRestart(n *fleetNode) {
	f := c.f
	c.drain(n)
	f.start(n)
	f.event("restarted %s on its data dir after its drain", n.id)
	if c.rng.IntN(2) == 1 {
		return
	}
	err := wait.Poll(90*time.Second, func() error {
		f.checkCrashes()
		if !ready(n) {
			return errors.New("not ready")
		}
		return nil
	})
	if err != nil {
		f.t.Fatalf("%s never rejoined after its drain: %v", n.id, err)
	}
	f.event("%s rejoined; draining it again at once", n.id)
	c.drain(n)
	f.start(n)
	f.event("restarted %s on its data dir after its second drain", n.id)
}

// killRestart SIGKILLs a node, leaves it down for 0.5-6 s (sometimes
// shorter than the failure timeout, sometimes longer) and restarts it on
// its data dir.
func (c *chaos) killRestart(n *fleetNode, why string) {
	down := time.Duration(500+c.rng.IntN(5500)) * time.Millisecond
	if why != "" {
		why = " (" + why + ")"
	}
	c.f.event("SIGKILL %s%s, down for %s", n.id, why, down)
	c.f.kill(n)
	time.Sleep(down) // the fault: down that long, either side of the failure timeout
	c.f.start(n)
	c.f.event("restarted %s", n.id)
}
