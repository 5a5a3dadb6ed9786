package fsm_test

import (
	"bytes"
	"testing"

	"github.com/floe-io/floe/cluster/fsm"
)

// FuzzApply feeds arbitrary entries to a fresh FSM, as a peer's log could:
// every golden command, and whatever the fuzzer makes of them, is applied
// or refused with an error, never a panic. The seeds are all committed
// golden entries (testdata/golden).
func FuzzApply(f *testing.F) {
	for _, c := range goldenCommands(f) {
		data, err := fsm.Encode(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{0x80})
	f.Add([]byte{1, '{', '}'})
	f.Fuzz(func(t *testing.T, data []byte) {
		m := fsm.New()
		_ = m.Apply(1, data) // refusal is fine; a panic is not
		_ = m.Apply(2, data) // and again: a resend of the same id
		_ = fsm.ProposalID(data)
	})
}

// FuzzDecodeSnapshot: a snapshot a peer sends decodes or fails, never
// panics; one that decodes encodes again.
func FuzzDecodeSnapshot(f *testing.F) {
	st := fsm.NewState()
	data, err := fsm.EncodeSnapshot(st)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := fsm.DecodeSnapshot(bytes.NewReader(data))
		if err != nil {
			return
		}
		if _, err := fsm.EncodeSnapshot(s); err != nil {
			t.Fatalf("a decoded snapshot does not encode: %v", err)
		}
	})
}
