//go:build long

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/floe-io/floe/internal/testing/wait"
)

// The disk-full fault fills the file system under one node's data
// directory (the Raft log and snapshots) for 3-6 s while the load goes on.
// Each node's data directory is its own tmpfs of diskSize, mounted when
// the node is made, so filling it touches no other node and no other file.
// Mounting needs root (CAP_SYS_ADMIN): without it the schedule leaves the
// fault out and says so.

const (
	diskSize = 256 << 20
	diskHeal = 5 * time.Second
)

// useSmallDisks mounts a tmpfs as the data directory of every node made
// from now on; false (and a log line) when this process may not mount.
func (f *fleet) useSmallDisks() bool {
	probe := filepath.Join(f.dir, "mount-probe")
	if err := os.MkdirAll(probe, 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", probe, "tmpfs", 0, "size=1m"); err != nil {
		f.t.Logf("disk-full left out of the schedule: cannot mount a tmpfs here (%v)", err)
		return false
	}
	_ = syscall.Unmount(probe, syscall.MNT_DETACH)
	f.smallDisks = true
	return true
}

// mountDisk gives n's data directory its own tmpfs.
func (f *fleet) mountDisk(n *fleetNode) {
	if err := os.MkdirAll(n.dataDir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", n.dataDir, "tmpfs", 0, fmt.Sprintf("size=%d", diskSize)); err != nil {
		f.t.Fatalf("mounting a tmpfs at %s: %v", n.dataDir, err)
	}
	// Detached, so it goes even while a process still has files open
	// (cleanups run before the fleet's processes are killed).
	f.t.Cleanup(func() { _ = syscall.Unmount(n.dataDir, syscall.MNT_DETACH) })
}

// diskFull fills one node's data directory (the leader's, a committer's
// or any node's) to the last byte for 3-6 s, then frees it. While full the
// node cannot append to its Raft log: it must say so in its status and
// commit nothing it cannot persist; once freed every table must commit
// again within diskHeal, the node's problem must clear, and the settle
// after the step requires the node to be a healthy member again.
func (c *chaos) diskFull() {
	f := c.f
	var n *fleetNode
	switch c.rng.IntN(3) {
	case 0:
		n = c.roleHolder("kill-leader")
	case 1:
		n = c.roleHolder("kill-committer")
	}
	if n == nil {
		n = pick(c.rng, f.running())
	}
	hold := time.Duration(3000+c.rng.IntN(3000)) * time.Millisecond
	filler := filepath.Join(n.dataDir, "filler")
	fd, err := os.OpenFile(filler, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		f.t.Fatal(err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(n.dataDir, &st); err != nil {
		f.t.Fatal(err)
	}
	free := int64(st.Bavail) * st.Bsize
	// Fill in steps down to the page: what one call cannot take, a
	// smaller one can, until the file system refuses a single page.
	for step := free; step >= 4096; step /= 2 {
		for syscall.Fallocate(int(fd.Fd()), 0, fileSize(fd), step) == nil {
		}
	}
	fd.Close()
	logFrom := len(f.incarnationLog(n))
	f.event("disk of %s full (%d MiB taken) for %s", n.id, free>>20, hold)
	said := f.storageProblemDuring(n, hold) // the fault: no space that long
	if err := os.Remove(filler); err != nil {
		f.t.Fatal(err)
	}
	took, err := f.commitsAgain(diskHeal) // chaos_clock_test.go
	f.event("disk of %s free again (its status said: %q); every table committed %.1fs after", n.id, said, took.Seconds())
	if err != nil {
		f.t.Errorf("a table did not commit within %s of the disk's freeing: %v", diskHeal, err)
	}
	// Bolt writes into the free pages its file already holds: a full disk
	// stops the log only once those are used. The node must say so when a
	// write failed.
	failed := false
	if l := f.incarnationLog(n); len(l) > logFrom {
		for _, line := range strings.Split(l[logFrom:], "\n") {
			failed = failed || strings.Contains(line, "component=raft") && strings.Contains(line, "no space left on device")
		}
	}
	switch {
	case failed && said == "":
		f.t.Errorf("%s never said in its status that it cannot write its Raft log while its disk was full", n.id)
	case !failed:
		f.event("%s wrote its Raft log into free pages its file held: no write failed", n.id)
	}
	// The problem is shown until the node writes its log again and 5 s
	// have passed since the last failure (the status must not flicker while
	// the disk is full). The next write waits for the leader's next append,
	// and Raft's back-off after failed appends reaches 10 s: the soak saw
	// 15 s. It must be gone within that.
	err = wait.Poll(diskHeal+15*time.Second, func() error {
		rep, err := f.fetch(n, time.Second)
		if err != nil {
			return err
		}
		if p, ok := rep.Problems["raft storage"]; ok {
			return fmt.Errorf("still says %q", p)
		}
		return nil
	})
	if err != nil {
		f.t.Errorf("%s: the storage problem did not clear after the disk was freed: %v", n.id, err)
	}
}

func fileSize(fd *os.File) int64 {
	fi, err := fd.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}

// storageProblemDuring polls n's status for hold and returns the problem
// it names about its Raft storage, "" if it never did.
func (f *fleet) storageProblemDuring(n *fleetNode, hold time.Duration) string {
	end := time.Now().Add(hold)
	said := ""
	for time.Now().Before(end) {
		if rep, err := f.fetch(n, time.Second); err == nil && said == "" {
			for k, v := range rep.Problems {
				if k == "raft storage" {
					said = k + ": " + v
				}
			}
		}
		time.Sleep(200 * time.Millisecond) // polling the status while the fault lasts
	}
	return said
}
