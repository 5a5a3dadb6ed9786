// Package wait is the one place Floe's tests wait: it polls a condition until
// it holds or a deadline passes, so no test sleeps a fixed time and hopes
// (rqlite's testPoll). Polling starts fast and backs off, so a condition that
// holds at once costs nothing and a slow one does not spin on shared CPUs.
//
// Only tests import it.
package wait

import (
	"fmt"
	"testing"
	"time"
)

// first and most are the polling interval's start and ceiling.
const (
	first = 5 * time.Millisecond
	most  = 250 * time.Millisecond
)

// For waits up to timeout for cond to hold and fails the test naming what it
// waited for when it does not.
func For(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	Until(t, timeout, what, func() error {
		if cond() {
			return nil
		}
		return fmt.Errorf("not yet")
	})
}

// Until waits up to timeout for check to return nil and fails the test with
// check's last error when it does not.
func Until(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	if err := Poll(timeout, check); err != nil {
		t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, err)
	}
}

// Poll calls check until it returns nil or timeout passes, and returns its
// last error (nil on success). For callers that fail in their own words or
// that wait outside a test's goroutine.
func Poll(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	interval := first
	for {
		err := check()
		if err == nil {
			return nil
		}
		if !time.Now().Before(deadline) {
			return err
		}
		timer := time.NewTimer(min(interval, time.Until(deadline)))
		<-timer.C
		interval = min(2*interval, most)
	}
}
