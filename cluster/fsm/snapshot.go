package fsm

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/floe-io/floe/internal/ledger"
)

// SnapshotVersion is the format version of FSM snapshots (and of the state
// backup, which is the same envelope). It is a major version: it grows only
// when a node of the version before would misread the new format. Fields an
// older node can ignore (encoding/json skips unknown keys) are added without
// a new version, as the proposal window was, so that an older follower
// still installs a newer leader's snapshot during a rolling upgrade. A node
// refuses a version higher than it knows (VersionError) rather than
// misread it.
const SnapshotVersion = 1

// VersionError: a snapshot or state backup is in a format version this
// node does not read. It wraps ErrSnapshotVersion.
type VersionError struct {
	Format    string // "snapshot", "state backup", ...
	Version   int    // the version found
	Supported int    // the highest version this node reads
}

func (e *VersionError) Error() string {
	if e.Version > e.Supported {
		return fmt.Sprintf("%s format version %d is newer than this node reads (up to version %d): upgrade this node to read it",
			e.Format, e.Version, e.Supported)
	}
	return fmt.Sprintf("%s format version %d is not one this node reads (versions 1 to %d)", e.Format, e.Version, e.Supported)
}

func (e *VersionError) Unwrap() error { return ErrSnapshotVersion }

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
		return nil, &VersionError{Format: "snapshot", Version: env.Version, Supported: SnapshotVersion}
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
	st.Namespaces = orEmpty(st.Namespaces)
	st.Tables = orEmpty(st.Tables)
	if st.Ledger == nil {
		st.Ledger = ledger.New()
	}
	st.Ledger.Offsets = orEmpty(st.Ledger.Offsets)
	st.Ledger.Pending = orEmpty(st.Ledger.Pending)
	st.Ledger.Assignments = orEmpty(st.Ledger.Assignments)
	st.Nodes = orEmpty(st.Nodes)
	st.Sources = orEmpty(st.Sources)
	st.Committers = orEmpty(st.Committers)
}

// orEmpty returns m, or an empty map where m is nil.
func orEmpty[M ~map[K]V, K comparable, V any](m M) M {
	if m == nil {
		return M{}
	}
	return m
}
