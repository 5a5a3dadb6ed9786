package fsm_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	. "github.com/floe-io/floe/cluster/fsm"
)

// drawEntry draws one log entry: a command both builds know (some of which
// the FSM refuses), a command only the newer build knows (PauseTable, not
// ignorable), or a type neither knows, with or without the ignorable bit.
func drawEntry(t *rapid.T, i int) []byte {
	name := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "name")
	var c Command
	switch kind := rapid.IntRange(0, 7).Draw(t, "kind"); kind {
	case 0:
		c = CreateNamespace{Parts: []string{name}}
	case 1:
		c = DropNamespace{Parts: []string{name}} // refused unless it exists
	case 2:
		c = CreateTable{Ident: []string{name, "t"}, MetadataLocation: fmt.Sprintf("file:///%s/%d.json", name, i)}
	case 3:
		c = RegisterNode{Node: Member{ID: name, Protocol: rapid.IntRange(ProtocolBase, ProtocolLevel).Draw(t, "level")}}
	case 4:
		c = PauseTable{Table: name + "\x1ft", At: int64(i)} // unknown to the older build
	case 5:
		return raw(byte(rapid.IntRange(100, 127).Draw(t, "type")), `{"x":1}`) // unknown to both, not ignorable
	default:
		return raw(byte(IgnorableFlag)|byte(rapid.IntRange(100, 127).Draw(t, "type")), `{"x":1}`) // unknown to both, ignorable
	}
	data, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestOlderBuildNeverDiverges: fed the same log, an FSM whose build lacks a
// command either ends in the same state as the newer one, or is halted with
// the state the newer one had just before the entry it could not apply.
// (An entry only the newer build knows and marked ignorable would be the one
// designed exception; the table marks only informational commands so.)
func TestOlderBuildNeverDiverges(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		newer, older := New(), New(Without(CmdPauseTable))
		// states[i]: the newer FSM's state after entry i (0: empty).
		states := [][]byte{stateJSON(t, newer)}
		n := rapid.IntRange(1, 40).Draw(t, "entries")
		for i := 1; i <= n; i++ {
			e := drawEntry(t, i)
			errNew, errOld := newer.Apply(uint64(i), e), older.Apply(uint64(i), e)
			if _, halted := older.Halted(); !halted && fmt.Sprint(errNew) != fmt.Sprint(errOld) {
				t.Fatalf("entry %d: newer answered %v, older %v", i, errNew, errOld)
			}
			if _, halted := newer.Halted(); !halted {
				states = append(states, stateJSON(t, newer))
			}
		}
		h, halted := older.Halted()
		if !halted {
			if _, newerHalted := newer.Halted(); newerHalted {
				t.Fatal("the newer build halted, the older did not")
			}
			if !bytes.Equal(stateJSON(t, older), stateJSON(t, newer)) {
				t.Fatal("states differ with neither halted")
			}
			return
		}
		if err := older.Apply(uint64(n+1), raw(byte(CmdCreateNamespace), `{"parts":["z"]}`)); !errors.Is(err, ErrUpgradeRequired) {
			t.Fatalf("halted FSM answered %v", err)
		}
		if want := states[h.Index-1]; !bytes.Equal(stateJSON(t, older), want) {
			t.Fatalf("halted at %d with a state the newer build never had:\n%s\n%s", h.Index, stateJSON(t, older), want)
		}
	})
}
