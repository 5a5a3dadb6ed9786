//go:build long

package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/proto/admin"
)

// TestMixedVersions is a rolling upgrade across Raft command types: three
// nodes run the build from just before ResumeTable (16) was added, so that
// ResumeTable, RequestSchema and SchemaApplied are all unknown to them, and
// are replaced one by one, under load, by the current build. While an old
// node still runs beside a new leader, the test resumes a table through a
// current-build node: the version gate refuses ResumeTable (it needs
// protocol level 2, the old node registers level 1) and names the old node,
// so the old node never meets the command and never parts from the others;
// once the last old node is replaced the same resume is accepted. At the
// end every (partition, offset) is in its table exactly once.
func TestMixedVersions(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end rolling upgrade between builds")
	}
	oldBin, oldRev, newest := previousBuild(t, "CmdResumeTable")
	t.Logf("old build: %s (the parent of the commit that added command %s)", oldRev, newest)

	f := newFleet(t)
	f.binFor = map[string]string{"old": oldBin}
	olds := f.startNew(3, 3, "old", false)
	f.settle(2 * time.Minute)
	p := f.startProducer(3)
	f.waitCommitted(time.Minute)
	w := f.watch(250 * time.Millisecond)

	replace := func(o *fleetNode) { f.replaceOld(o) }
	replace(olds[0])
	replace(olds[1])

	// One old node is left. Make sure a current-build node leads: pause the
	// old node past the failure timeout if it is the leader.
	last := olds[2]
	if rep, _, err := f.status(); err == nil && rep.Leader == last.id {
		f.event("pausing %s (old build, leader) so a current-build node takes over", last.id)
		f.pause(last)
		wait.For(t, time.Minute, "a current-build leader after pausing "+last.id, func() bool {
			rep, _, err := f.status()
			return err == nil && rep.Leader != "" && rep.Leader != last.id
		})
		f.resume(last)
		f.settle(2 * time.Minute)
	}
	// A resume through a current-build node is refused by the version gate
	// while the old node is in the group, naming it; the old node meets no
	// command it does not know.
	resume := func() error {
		for _, n := range f.running() {
			if n != last {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_, err := admin.ResumeTable(ctx, n.adminAddr, fleetNamespace+".orders", false)
				return err
			}
		}
		return errors.New("no current-build node running")
	}
	if err := resume(); err == nil || !strings.Contains(err.Error(), "needs protocol level") || !strings.Contains(err.Error(), last.id+" at level 1") {
		t.Fatalf("resume beside old-build node %s: %v; want the version gate's refusal naming it", last.id, err)
	}
	if rep, err := f.fetch(last, 3*time.Second); err != nil || rep.SkippedCommands != 0 {
		t.Fatalf("old-build node %s: skipped %d command(s) (%v); the gate should keep them out of the log", last.id, rep.SkippedCommands, err)
	}
	w.waitProgress(time.Minute) // the mixed group keeps ingesting
	replace(last)
	wait.Until(t, time.Minute, "the resume to be accepted once every member is upgraded", resume)

	f.verify(p.stop(), 3*time.Minute)
	w.stop()
	_, summary := w.maxFreshness()
	t.Logf("mixed-version upgrade: %s", summary)
}

// replaceOld starts a current-build node, waits until it is a member,
// then drains the old-build node o (it must exit 0) and returns the new one.
func (f *fleet) replaceOld(o *fleetNode) *fleetNode {
	n := f.startNew(1, 0, "new", false)[0]
	f.event("started %s (current build) to replace %s (old build)", n.id, o.id)
	f.settle(2 * time.Minute)
	code, took, err := f.terminate(o, fleetDrainTimeout+5*time.Second)
	if err != nil || code != 0 {
		f.t.Fatalf("old-build node %s after SIGTERM: exit %d, %v", o.id, code, err)
	}
	f.remove(o)
	f.event("%s drained and exited 0 in %.1fs", o.id, took.Seconds())
	f.settle(2 * time.Minute)
	return n
}

// previousBuild builds floe from the parent of the commit that added the
// Raft command type named cmd (which must exist), so that the current build
// knows commands the old one does not. It skips the test outside a git
// checkout.
func previousBuild(t *testing.T, cmd string) (bin, rev, newest string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "cluster", "fsm", "commands.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\s*(Cmd\w+)\s+CommandType = (\d+)`).FindAllStringSubmatch(string(src), -1) {
		if m[1] == cmd {
			newest = cmd
		}
	}
	if newest == "" {
		t.Fatalf("no command type %s in cluster/fsm/commands.go", cmd)
	}
	// The enum lived in cluster/commands.go until cluster split into
	// subpackages.
	bin, rev = buildBefore(t, root, newest+" ", "cluster/fsm/commands.go", "cluster/commands.go")
	return bin, rev, newest
}

// buildBefore builds floe from the parent of the oldest commit that changed
// the count of text in files (the commit that added it). It skips the test
// outside a git checkout with that history.
func buildBefore(t *testing.T, root, text string, files ...string) (bin, rev string) {
	t.Helper()
	git := func(args ...string) (string, error) {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		return strings.TrimSpace(string(out)), err
	}
	intro, err := git(append([]string{"log", "--format=%H", "-S", text, "--"}, files...)...)
	if err != nil || intro == "" {
		t.Skipf("not a git checkout with history (%v): cannot build the previous version", err)
	}
	lines := strings.Split(intro, "\n")
	rev, err = git("rev-parse", lines[len(lines)-1]+"^")
	if err != nil {
		t.Skipf("the commit that added %q has no parent: %v", text, err)
	}
	dir := t.TempDir()
	archive := exec.Command("git", "-C", root, "archive", "--format=tar", rev)
	untar := exec.Command("tar", "-x", "-C", dir)
	var aerr bytes.Buffer
	archive.Stderr = &aerr
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v %s", rev, err, aerr.String())
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("extracting %s: %v", rev, err)
	}
	bin = filepath.Join(dir, "floe-old")
	build := exec.Command("go", "build", "-o", bin, "./cmd/floe")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", rev, err, out)
	}
	return bin, rev
}
