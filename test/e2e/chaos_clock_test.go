//go:build long

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/testing/wait"
)

// The clock-jump fault steps one floe process's wall clock, and only its
// wall clock, as a bad NTP server or a VM resume does: the chaos fleet runs
// a floe binary built with Go's time.Now patched (go build -overlay) to add
// the seconds written in the file FLOE_CHAOS_CLOCK_FILE names, re-read
// every 50 ms. The monotonic clock (timers, leases, timeouts) runs on, as
// with a real step. The patch is made from the installed Go's own
// time/time.go at test time; a Go whose time.Now no longer matches fails
// the build loudly rather than running without the fault.

const clockHeal = 5 * time.Second

var (
	clockBinOnce sync.Once
	clockBin     string
	clockBinErr  error
)

// clockBinary builds (once) the floe binary whose wall clock the tests can
// step.
func clockBinary() (string, error) {
	clockBinOnce.Do(func() { clockBin, clockBinErr = buildClockBinary() })
	return clockBin, clockBinErr
}

func buildClockBinary() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src", "time")
	orig, err := os.ReadFile(filepath.Join(src, "time.go"))
	if err != nil {
		return "", err
	}
	const now = "func Now() Time {\n\tsec, nsec, mono := runtimeNow()\n"
	if strings.Count(string(orig), now) != 1 {
		return "", errors.New("the installed Go's time.Now has changed shape: update chaos_clock_test.go's patch")
	}
	// A stable directory, so the build cache serves the patched packages
	// to the next run.
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "floe-chaosclock")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	patched := strings.Replace(string(orig), now, now+"\tsec += chaosClockOffset(mono)\n", 1)
	files := map[string]string{"time.go": patched, "zz_chaosclock.go": clockOffsetSource}
	replace := map[string]string{}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := writeAtomically(p, []byte(body)); err != nil {
			return "", err
		}
		replace[filepath.Join(src, name)] = p
	}
	var js strings.Builder
	js.WriteString(`{"Replace":{`)
	first := true
	for from, to := range replace {
		if !first {
			js.WriteString(",")
		}
		first = false
		fmt.Fprintf(&js, "%q:%q", from, to)
	}
	js.WriteString("}}")
	overlay := filepath.Join(dir, "overlay.json")
	if err := writeAtomically(overlay, []byte(js.String())); err != nil {
		return "", err
	}
	// One binary per checkout, renamed into place: two checkouts' runs at
	// once (a soak beside CI) never rebuild the other's while it starts
	// nodes from it.
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(wd))
	bin := filepath.Join(dir, hex.EncodeToString(sum[:8]), "floe")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	tmp := fmt.Sprintf("%s.%d", bin, os.Getpid())
	cmd := exec.Command("go", "build", "-overlay", overlay, "-o", tmp, "github.com/floe-io/floe/cmd/floe")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -overlay (time.Now patched): %v\n%s", err, b)
	}
	return bin, os.Rename(tmp, bin)
}

// writeAtomically writes data to p through a temporary file renamed into
// place, so a build reading p beside another run never sees half a file.
func writeAtomically(p string, data []byte) error {
	tmp := fmt.Sprintf("%s.%d", p, os.Getpid())
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// clockOffsetSource is added to package time. time.Now only loads an
// atomic: it is called where a syscall cannot run (on the system stack:
// "morestack on g0"), so a goroutine started by package time's init reads
// the file. It cannot import os (os imports time): it reads with package
// time's own syscall helpers.
const clockOffsetSource = `package time

import (
	"sync/atomic"
	"syscall"
)

var (
	chaosClockPath, _ = syscall.Getenv("FLOE_CHAOS_CLOCK_FILE")
	chaosClockOff     atomic.Int64
)

func init() {
	if chaosClockPath != "" {
		go chaosClockLoop()
	}
}

// chaosClockOffset is the wall clock's step in seconds.
func chaosClockOffset(int64) int64 { return chaosClockOff.Load() }

// chaosClockLoop re-reads the step every 50 ms: the decimal number (may be
// negative) in the file FLOE_CHAOS_CLOCK_FILE names; 0 without the file.
func chaosClockLoop() {
	for {
		var v int64
		if fd, err := open(chaosClockPath); err == nil {
			var buf [32]byte
			n, _ := read(fd, buf[:])
			closefd(fd)
			neg := n > 0 && buf[0] == '-'
			for _, b := range buf[:max(n, 0)] {
				if b >= '0' && b <= '9' {
					v = v*10 + int64(b-'0')
				}
			}
			if neg {
				v = -v
			}
		}
		chaosClockOff.Store(v)
		Sleep(50 * Millisecond)
	}
}
`

// clockFile is where a node's process reads its clock step.
func (n *fleetNode) clockFile() string { return filepath.Join(n.dir, "clock-offset") }

// setClock steps n's wall clock to d from true time (0: true time again).
func (f *fleet) setClock(n *fleetNode, d time.Duration) {
	if err := os.WriteFile(n.clockFile(), []byte(fmt.Sprintf("%d\n", int64(d/time.Second))), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// clockJump steps the wall clock of a table's committer 2-10 minutes
// forward or back for 2-4 s of load and then back to true time. During a
// backward step of more than a minute the node cannot commit (Iceberg
// refuses a snapshot older than the table's newest by more than a
// minute); a forward step must leave no snapshot in the future. Either
// way every table must commit again within clockHeal of the fault's end,
// and no table may carry a snapshot stamped more than a minute ahead.
func (c *chaos) clockJump() {
	f := c.f
	topic := pick(c.rng, f.topics)
	var n *fleetNode
	if rep, _, err := f.status(); err == nil {
		tr, _ := tableReport(rep, tableOf(topic))
		n = f.node(tr.Committer)
	}
	if n == nil {
		n = pick(c.rng, f.running())
	}
	d := time.Duration(2+c.rng.IntN(9)) * time.Minute
	if c.rng.IntN(2) == 0 {
		d = -d
	}
	hold := time.Duration(2000+c.rng.IntN(2000)) * time.Millisecond
	f.event("clock of %s stepped %s for %s", n.id, d, hold)
	f.setClock(n, d)
	start := time.Now()
	// Maintenance on the stepped node while the step lasts: snapshot
	// expiry commits metadata whose times iceberg-go reads from the clock.
	f.event("maintenance of %s (its committer %s) during the step: %s", tableOf(topic), n.id, f.maintain(n, tableOf(topic)))
	time.Sleep(time.Until(start.Add(hold))) // the fault: that long on the wrong time
	f.setClock(n, 0)
	took, err := f.commitsAgain(clockHeal)
	f.event("clock of %s true again; every table committed %.1fs after", n.id, took.Seconds())
	if err != nil {
		f.t.Errorf("a table did not commit within %s of the clock step's end: %v", clockHeal, err)
	}
	f.checkNoFutureSnapshots()
}

// checkNoFutureSnapshots reads each table's current metadata and fails
// the test if a snapshot is stamped more than a minute after now.
func (f *fleet) checkNoFutureSnapshots() {
	rep, _, err := f.status()
	if err != nil {
		f.event("no status for the snapshot-time check (%v)", err)
		return
	}
	limit := time.Now().Add(time.Minute).UnixMilli()
	for _, topic := range f.topics {
		tr, _ := tableReport(rep, tableOf(topic))
		if tr.MetadataLocation == "" {
			continue
		}
		ctx := context.Background()
		tbl, err := table.NewFromLocation(ctx, table.Identifier{fleetNamespace, topic}, tr.MetadataLocation,
			icebergio.LoadFSFunc(node.IOProps(f.wh), tr.MetadataLocation), nil)
		if err != nil {
			f.t.Errorf("reading %s after a clock step: %v", tr.MetadataLocation, err)
			continue
		}
		for e := range tbl.Metadata().SnapshotLogs() {
			if e.TimestampMs > limit {
				f.t.Errorf("%s: snapshot %d stamped %s in the future", tr.Table, e.SnapshotID,
					time.Until(time.UnixMilli(e.TimestampMs)).Round(time.Second))
			}
		}
	}
}

// roleHolder is the leader (act "kill-leader") or a random table's
// committer, nil if the fleet does not say.
func (c *chaos) roleHolder(act string) *fleetNode {
	f := c.f
	if act == "kill-leader" {
		_, ln, err := f.leaderStatus()
		if err != nil {
			return nil
		}
		return ln
	}
	rep, _, err := f.status()
	if err != nil {
		return nil
	}
	tr, _ := tableReport(rep, tableOf(pick(c.rng, f.topics)))
	return f.node(tr.Committer)
}

// commitsAgain waits until every mapped table has committed past where
// it stood when called, and says how long that took.
func (f *fleet) commitsAgain(limit time.Duration) (time.Duration, error) {
	start := time.Now()
	var from map[string]int64
	err := wait.Poll(limit, func() error {
		now, err := f.committedSums()
		if err != nil {
			return err
		}
		if from == nil {
			from = now
			return errors.New("where the tables stand is known only now")
		}
		for topic, n := range now {
			if n <= from[topic] {
				return fmt.Errorf("table %s has not committed", tableOf(topic))
			}
		}
		return nil
	})
	return time.Since(start), err
}

// maintain asks n to run a table's maintenance now (POST
// /v1/tables/{t}:maintain) and returns the answer's gist.
func (f *fleet) maintain(n *fleetNode, table string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+n.adminAddr+"/v1/tables/"+table+":maintain", strings.NewReader("{}"))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	if f.adminToken != "" {
		req.Header.Set("Authorization", "Bearer "+f.adminToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	return resp.Status + " " + string(body)
}
