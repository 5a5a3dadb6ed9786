package wait

import (
	"errors"
	"testing"
	"time"
)

func TestPollReturnsAtOnceWhenTheConditionHolds(t *testing.T) {
	calls := 0
	if err := Poll(time.Minute, func() error { calls++; return nil }); err != nil || calls != 1 {
		t.Fatalf("err %v after %d calls, want nil after 1", err, calls)
	}
}

func TestPollWaitsUntilTheConditionHolds(t *testing.T) {
	calls := 0
	err := Poll(time.Minute, func() error {
		calls++
		if calls < 4 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls != 4 {
		t.Fatalf("err %v after %d calls, want nil after 4", err, calls)
	}
}

func TestPollGivesTheLastErrorAtTheDeadline(t *testing.T) {
	start := time.Now()
	err := Poll(30*time.Millisecond, func() error { return errors.New("still down") })
	if err == nil || err.Error() != "still down" {
		t.Fatalf("err %v, want the check's own error", err)
	}
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Fatalf("gave up after %s, before the deadline", took)
	}
}
