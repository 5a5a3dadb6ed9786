package worker

import (
	"testing"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/worker/control"
)

// countingHandee counts what a pipeline is handed.
type countingHandee struct{ assign, resume, control int }

func (c *countingHandee) SetAssignment(map[ledger.TopicPartition]uint64)    { c.assign++ }
func (c *countingHandee) SetResume(uint64, map[ledger.TopicPartition]int64) { c.resume++ }
func (c *countingHandee) SetControl(control.TableControl)                   { c.control++ }

// TestHandOnlyChanges: a pipeline is handed everything the first time,
// then only what changed; the same state again (an entry of another
// table) hands it nothing.
func TestHandOnlyChanges(t *testing.T) {
	tp := ledger.TopicPartition{Topic: "orders"}
	state := func() handed {
		return handed{assign: map[ledger.TopicPartition]uint64{tp: 1}, resumeGen: 2,
			skips: map[ledger.TopicPartition]int64{tp: 7}, control: control.TableControl{RewindGen: 1, ReplaceFrom: map[ledger.TopicPartition]int64{tp: 3}}}
	}
	var p countingHandee
	last := hand(&p, nil, state())
	if p != (countingHandee{1, 1, 1}) {
		t.Fatalf("first hand: %+v, want everything once", p)
	}
	for range 10 {
		last = hand(&p, last, state())
	}
	if p != (countingHandee{1, 1, 1}) {
		t.Fatalf("the same state handed again: %+v, want nothing more", p)
	}
	// Each step changes one thing more and hands exactly it.
	now := state()
	steps := []struct {
		name   string
		change func()
		want   countingHandee
	}{
		{"a new epoch", func() { now.assign = map[ledger.TopicPartition]uint64{tp: 2} }, countingHandee{2, 1, 1}},
		{"the partition gone", func() { now.assign = nil }, countingHandee{3, 1, 1}},
		{"a skip gone", func() { now.skips = nil }, countingHandee{3, 2, 1}},
		{"a resume", func() { now.resumeGen = 3 }, countingHandee{3, 3, 1}},
		{"a replace delete done", func() { now.control.ReplaceFrom = nil }, countingHandee{3, 3, 2}},
		{"a pause", func() { now.control.Paused = true }, countingHandee{3, 3, 3}},
		{"a rewind", func() { now.control.RewindGen = 2 }, countingHandee{3, 3, 4}},
	}
	for _, s := range steps {
		s.change()
		last = hand(&p, last, now)
		if p != s.want {
			t.Fatalf("%s: handed %+v in all, want %+v", s.name, p, s.want)
		}
	}
}
