package rss

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/procstatus"
)

// ErrUnsupported: no /proc/self/status (not Linux).
var ErrUnsupported = errors.New("resident memory is read from /proc/self/status (Linux only)")

// Result is one measurement, in bytes.
type Result struct {
	// Base is the resident memory before the work, after the garbage of
	// earlier tests was collected and returned to the operating system.
	Base uint64
	// Peak is the highest resident memory of the process while the work
	// ran: the kernel's high-water mark reset just before (Exact), or else
	// the highest of VmRSS sampled every millisecond.
	Peak  uint64
	Exact bool
}

// Growth is Peak - Base: what the work added to what the process held.
func (r Result) Growth() int64 { return int64(r.Peak) - int64(r.Base) }

func (r Result) String() string {
	how := "VmHWM"
	if !r.Exact {
		how = "sampled VmRSS"
	}
	return fmt.Sprintf("resident %d MiB before, peak %d MiB (%s), grew %d MiB", r.Base>>20, r.Peak>>20, how, r.Growth()>>20)
}

// Measure runs work and returns the process's resident memory before it
// and at its peak while it ran; it skips t where that cannot be read.
//
// A test binary runs a package's tests in one process, whose lifetime
// peak includes earlier tests: Measure first returns freed memory to the
// OS (so Base is what is really still held) and resets the kernel's
// high-water mark (clear_refs 5, so Peak belongs to this work alone). The
// peak is then the process's true resident maximum during work, including
// what earlier tests still hold: an assertion on it is conservative.
func Measure(t testing.TB, work func()) Result {
	t.Helper()
	if _, err := read(); err != nil {
		t.Skipf("%v: %v", ErrUnsupported, err)
	}
	debug.FreeOSMemory()
	base, _ := read()
	// Without the reset (an old kernel, a restricted /proc) the high-water
	// mark would be the whole process's; sample instead.
	exact := resetHWM() == nil
	var (
		mu      sync.Mutex
		sampled = base.rss
		stop    = make(chan struct{})
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if s, err := read(); err == nil {
				mu.Lock()
				sampled = max(sampled, s.rss)
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	func() {
		defer close(stop) // also when work ends the test (t.Fatal)
		work()
	}()
	<-done
	end, _ := read()
	r := Result{Base: base.rss, Peak: max(sampled, end.rss), Exact: exact}
	if exact {
		r.Peak = max(r.Peak, end.hwm)
	}
	return r
}

// resetHWM sets the kernel's high-water mark of resident memory to the
// current value (Linux 4.0+); a variable so that a test can take the
// sampling path.
var resetHWM = func() error { return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

type status struct{ rss, hwm uint64 }

// read parses VmRSS and VmHWM of /proc/self/status.
func read() (status, error) {
	f, err := procstatus.Read("VmRSS", "VmHWM")
	if err != nil {
		return status{}, err
	}
	rss, ok1 := f["VmRSS"]
	hwm, ok2 := f["VmHWM"]
	if !ok1 || !ok2 {
		return status{}, errors.New("no VmRSS and VmHWM in /proc/self/status")
	}
	return status{rss: rss, hwm: hwm}, nil
}
