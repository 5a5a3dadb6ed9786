package backend

import (
	"strings"
	"testing"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// TestResumeMessage: a resume without skip of a table suspended at a bad
// record answers that the table will stop at the same record again and
// how to skip it (it used to answer "resumed" and stop again without a
// word); with skip it names the records skipped; a table suspended at
// nothing (paused by an operator) is simply resumed.
func TestResumeMessage(t *testing.T) {
	at := func(topic string, p int32, off int64) fsm.ResumeSkip {
		return fsm.ResumeSkip{TopicPartition: ledger.TopicPartition{Topic: topic, Partition: p}, Offset: off}
	}
	for _, c := range []struct {
		name  string
		skip  bool
		stuck []fsm.ResumeSkip
		want  string
	}{
		{"paused, not suspended", false, nil, "resumed demo.orders"},
		{"suspended, no skip", false, []fsm.ResumeSkip{at("mt", 0, 42)},
			"resumed demo.orders; it is suspended at a bad record (mt/0 offset 42) and will stop at it again: `floe ctl tables resume demo.orders --skip` skips it"},
		{"suspended on two nodes, no skip", false, []fsm.ResumeSkip{at("mt", 0, 42), at("mt", 3, 7)},
			"resumed demo.orders; it is suspended at bad records (mt/0 offset 42, mt/3 offset 7) and will stop at them again: `floe ctl tables resume demo.orders --skip` skips them"},
		{"skip", true, []fsm.ResumeSkip{at("mt", 0, 42)}, "resumed demo.orders, skipping mt/0 offset 42"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := resumeMessage("demo.orders", c.skip, c.stuck); got != c.want {
				t.Fatalf("resumeMessage =\n%s\nwant\n%s", got, c.want)
			}
		})
	}
	if m := resumeMessage("demo.orders", true, []fsm.ResumeSkip{at("mt", 0, 42)}); strings.Contains(m, "stop at it again") {
		t.Fatalf("a resume with skip warns of stopping again: %s", m)
	}
}
