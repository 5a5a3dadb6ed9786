package fsm

import (
	"encoding/json"
	"fmt"
	"io"
)

// SnapshotVersion is the format version of FSM snapshots (and of the state
// backup, which is the same envelope). A node refuses to restore a snapshot
// with a higher version than it knows.
const SnapshotVersion = 1

type snapshotEnvelope struct {
	Version int    `json:"version"`
	State   *State `json:"state"`
}

// EncodeSnapshot serializes a state as a versioned snapshot envelope. The
// caller keeps the state from changing meanwhile: it encodes a copy
// (FSM.Snapshot), never the FSM's live state outside its lock.
func EncodeSnapshot(s *State) ([]byte, error) {
	data, err := json.Marshal(snapshotEnvelope{Version: SnapshotVersion, State: s})
	if err != nil {
		return nil, fmt.Errorf("encoding snapshot: %w", err)
	}
	return data, nil
}

// DecodeSnapshot reads and validates a snapshot written by EncodeSnapshot.
func DecodeSnapshot(r io.Reader) (*State, error) {
	env := snapshotEnvelope{State: NewState()}
	if err := json.NewDecoder(r).Decode(&env); err != nil {
		return nil, fmt.Errorf("decoding snapshot: %w", err)
	}
	if env.Version < 1 || env.Version > SnapshotVersion {
		return nil, fmt.Errorf("snapshot version %d (this node reads up to %d): %w", env.Version, SnapshotVersion, ErrSnapshotVersion)
	}
	st := env.State
	fillMissing(st)
	if err := st.Ledger.Validate(); err != nil {
		return nil, fmt.Errorf("snapshot ledger is inconsistent: %w", err)
	}
	return st, nil
}

// fillMissing gives a decoded state the empty maps an older or sparse
// snapshot left out, so apply functions can write into them.
func fillMissing(st *State) {
	fill := NewState()
	if st.Namespaces == nil {
		st.Namespaces = fill.Namespaces
	}
	if st.Tables == nil {
		st.Tables = fill.Tables
	}
	if st.Ledger == nil {
		st.Ledger = fill.Ledger
	}
	if st.Ledger.Offsets == nil {
		st.Ledger.Offsets = fill.Ledger.Offsets
	}
	if st.Ledger.Pending == nil {
		st.Ledger.Pending = fill.Ledger.Pending
	}
	if st.Ledger.Assignments == nil {
		st.Ledger.Assignments = fill.Ledger.Assignments
	}
	if st.Nodes == nil {
		st.Nodes = fill.Nodes
	}
	if st.Sources == nil {
		st.Sources = fill.Sources
	}
	if st.Committers == nil {
		st.Committers = fill.Committers
	}
}
