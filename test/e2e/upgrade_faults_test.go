//go:build long

package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/testing/wait"
)

// TestUpgradeUnderFaults is a rolling upgrade from the build before the
// current protocol level (7, the operator's drain mark) to this one, under
// load, with a node killed and restarted before each replacement. While an
// old-build member remains, an operator's drain through the API is the
// plain mark that build understands, so the drained node's restart clears
// it; once every member runs this build the mark is the operator's: it
// outlives the node's restart and only an undrain clears it. At the end
// every (partition, offset) is in its table exactly once.
func TestUpgradeUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end rolling upgrade between builds, with kills")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	oldBin, oldRev := buildBefore(t, root, "ProtocolOperatorDrain", "cluster/fsm/version.go")
	t.Logf("old build: %s (protocol level 6)", oldRev)

	f := newFleet(t)
	f.binFor = map[string]string{"old": oldBin}
	olds := f.startNew(3, 3, "old", false)
	f.settle(2 * time.Minute)
	p := f.startProducer(3)
	f.waitCommitted(time.Minute)
	w := f.watch(250 * time.Millisecond)

	kills := 0
	killOne := func() {
		run := f.running()
		n := run[kills%len(run)] // any build, a different position each time
		kills++
		f.event("SIGKILL %s, restarted at once", n.id)
		f.kill(n)
		f.start(n)
		f.settle(2 * time.Minute)
	}
	replace := func(o *fleetNode) *fleetNode {
		killOne()
		return f.replaceOld(o)
	}
	replace(olds[0])
	n := replace(olds[1])

	// An old member remains: the operator's drain is a plain mark, which
	// the drained node's next start clears, as in the old build.
	f.operatorDrain(n, "drain")
	f.restartAndWatchMark(n, false)
	f.settle(2 * time.Minute)

	n = replace(olds[2])
	// Every member at level 7: the mark is the operator's and stays.
	f.operatorDrain(n, "drain")
	f.restartAndWatchMark(n, true)
	f.operatorDrain(n, "undrain")
	wait.For(t, 30*time.Second, n.id+" undrained", func() bool { return !f.draining(n) })
	f.settle(2 * time.Minute)

	w.waitProgress(time.Minute)
	f.verify(p.stop(), 3*time.Minute)
	w.stop()
}

// operatorDrain sends the admin API's drain or undrain of n (verb) to
// another running node, and waits until the membership shows it.
func (f *fleet) operatorDrain(n *fleetNode, verb string) {
	f.t.Helper()
	var via *fleetNode
	for _, o := range f.running() {
		if o != n && o.bin == "" {
			via = o
			break
		}
	}
	if via == nil {
		f.t.Fatal("no other current-build node to send the drain through")
	}
	url := fmt.Sprintf("http://%s/v1/cluster/members/%s:%s", via.adminAddr, n.id, verb)
	resp, err := http.Post(url, "application/json", nil)
	if err != nil {
		f.t.Fatalf("%s %s: %v", verb, n.id, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("%s %s through %s: HTTP %d", verb, n.id, via.id, resp.StatusCode)
	}
	f.event("operator: %s %s (through %s)", verb, n.id, via.id)
	if verb == "drain" {
		wait.For(f.t, 30*time.Second, n.id+" draining", func() bool { return f.draining(n) })
	}
}

// draining reports whether the leader's membership marks n draining.
func (f *fleet) draining(n *fleetNode) bool {
	rep, _, err := f.leaderStatus()
	if err != nil {
		return false
	}
	for _, m := range rep.Members {
		if m.ID == n.id {
			return m.Draining
		}
	}
	return false
}

// restartAndWatchMark kills n and starts it on its data dir, waits until it
// is ready and registered again, and checks its draining mark: kept, or
// cleared by its first registration.
func (f *fleet) restartAndWatchMark(n *fleetNode, kept bool) {
	f.t.Helper()
	f.event("SIGKILL %s (drained by the operator) and restart it", n.id)
	f.kill(n)
	f.start(n)
	wait.For(f.t, 90*time.Second, n.id+" ready again", func() bool { f.checkCrashes(); return ready(n) })
	if !kept {
		wait.For(f.t, 30*time.Second, "the restart to clear the plain mark of "+n.id, func() bool { return !f.draining(n) })
		return
	}
	// Its registration runs at start and at every autopilot tick: the
	// mark must hold through several.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !f.draining(n) {
			f.t.Fatalf("%s's restart cleared the operator's drain mark", n.id)
		}
		time.Sleep(250 * time.Millisecond) // sampling the mark over several registration ticks
	}
	f.event("%s kept the operator's drain mark across its restart", n.id)
}
