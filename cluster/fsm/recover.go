package fsm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Recovering a halted FSM without a restart. A halt (version.go) stops the
// FSM at an entry of a type this build does not know. A restart on a newer
// build replays the log; but often the entry's effect is gone again by the
// time anyone looks (a pause that was resumed, a mapping deleted), and the
// node could go on from the leader's state if that state holds nothing its
// build cannot read. Two checks decide, one on each side:
//
//   - the leader states the protocol level its state's content needs
//     (State.ContentLevel): values an older build would misread in fields it
//     has, such as a gzip metadata location;
//   - the halted node decodes the leader's snapshot and encodes it again
//     (DecodeLossless): a field its build does not have is dropped by the
//     decoder, so the two differ, and the node stays halted rather than
//     run on a state with a hole in it.
//
// Resume then installs the state; the caller (package raftnode) first
// waits until Raft has handed over every entry up to the state's index, and
// then applies the ones after it from the log, so the FSM is never ahead of
// or behind the index Raft labels its snapshots with.

// ContentLevel returns the protocol level a node needs to hold this state
// as it is: the highest level among its values that a build of a lower
// level has fields for but would misread. New fields need no entry here: a
// build without them fails DecodeLossless. New meanings of old fields do:
// every contentLevel of a command whose effect stays in the state has its
// counterpart here.
func (s *State) ContentLevel() int {
	level := ProtocolBase
	for _, t := range s.Tables {
		if t != nil {
			level = max(level, metadataLevel(t.MetadataLocation))
		}
	}
	for _, m := range s.Mappings {
		if m != nil {
			level = max(level, m.Table.Level())
		}
	}
	return level
}

// DecodeLossless decodes a snapshot another node wrote and checks that this
// build holds every value in it: encoded again, it must say the same, up to
// empty values (which an absent field and an empty one both mean). The
// error names the first path that differs.
func DecodeLossless(data []byte) (*State, error) {
	st, err := DecodeSnapshot(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	again, err := EncodeSnapshot(st)
	if err != nil {
		return nil, err
	}
	var want, got any
	if err := decodeTree(data, &want); err != nil {
		return nil, err
	}
	if err := decodeTree(again, &got); err != nil {
		return nil, err
	}
	if path := firstDiff(prune(want), prune(got), "snapshot"); path != "" {
		return nil, fmt.Errorf("%w: %s is not a field this build has (protocol level %d)", ErrLossySnapshot, path, ProtocolLevel)
	}
	return st, nil
}

func decodeTree(data []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber() // compare numbers as written: a float64 would round ids
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("decoding snapshot: %w", err)
	}
	return nil
}

// prune drops empty values (null, false, 0, "", {} and []) from maps,
// deepest first, so an absent field and an empty one compare equal.
func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if p := prune(e); isEmpty(p) {
				delete(x, k)
			} else {
				x[k] = p
			}
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = prune(e)
		}
		return x
	}
	return v
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case json.Number:
		return x == "0"
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// firstDiff returns the path of the first difference between two pruned
// JSON trees, "" when they are equal. Keys are visited in order, so the
// answer is the same on every run.
func firstDiff(a, b any, path string) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return path
		}
		keys := slices.Sorted(maps.Keys(x))
		for _, k := range keys {
			if d := firstDiff(x[k], y[k], path+"."+k); d != "" {
				return d
			}
		}
		for _, k := range slices.Sorted(maps.Keys(y)) {
			if _, ok := x[k]; !ok {
				return path + "." + k
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path
		}
		for i := range x {
			if d := firstDiff(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	}
	if a != b {
		return path
	}
	return ""
}

// Resume ends a halt with a state the leader served: st must be one
// DecodeLossless accepted, at an index at or past the halted entry, and
// the caller must apply next the entry after st.Applied. It reports whether
// the FSM was halted (false: nothing changed).
func (f *FSM) Resume(st *State) (bool, error) {
	f.mu.Lock()
	if f.halt == nil {
		f.mu.Unlock()
		return false, nil
	}
	if st.Applied < f.halt.Index {
		h := *f.halt
		f.mu.Unlock()
		return false, fmt.Errorf("resuming at index %d: the served state ends before the halted entry %d", st.Applied, h.Index)
	}
	f.state = st
	f.halt = nil
	f.haltCh = make(chan struct{})
	f.mu.Unlock()
	f.notify(touched{all: true})
	return true, nil
}
