package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/hashicorp/raft"
)

// SnapshotVersion is the format version of FSM snapshots. A node refuses to
// restore a snapshot with a higher version than it knows.
const SnapshotVersion = 1

// FSM is the Raft state machine. Lock order: FSM.mu is a leaf lock; nothing is
// called while holding it except pure state functions.
type FSM struct {
	mu      sync.RWMutex
	state   *State
	changed chan struct{} // closed and replaced after every applied entry
	log     *slog.Logger
}

// NewFSM returns an FSM with an empty state.
func NewFSM(log *slog.Logger) *FSM {
	if log == nil {
		log = slog.Default()
	}
	return &FSM{state: NewState(), changed: make(chan struct{}), log: log}
}

// ApplyResult is what Apply returns for every entry: the refusal, if any.
type ApplyResult struct {
	Err error
}

// Apply implements raft.FSM.
func (f *FSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return ApplyResult{}
	}
	return ApplyResult{Err: f.apply(l.Index, l.Data)}
}

func (f *FSM) apply(index uint64, data []byte) error {
	if len(data) == 0 {
		return fmt.Errorf("empty command at index %d", index)
	}
	typ := CommandType(data[0])
	f.mu.Lock()
	defer f.notify()
	defer f.mu.Unlock()
	f.state.Applied = index
	fn, ok := registry[typ]
	if !ok {
		// Written by a newer node: skip it so mixed versions keep going.
		f.state.Skipped++
		f.log.Warn("skipping unknown raft command", "type", uint8(typ), "index", index)
		return nil
	}
	return fn(f.state, data[1:])
}

func (f *FSM) notify() {
	f.mu.Lock()
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// Watch returns a channel closed at the next applied entry.
func (f *FSM) Watch() <-chan struct{} {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.changed
}

// Read runs fn with the current state under the read lock. fn must not keep
// references to the state or mutate it.
func (f *FSM) Read(fn func(*State)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fn(f.state)
}

type snapshotEnvelope struct {
	Version int    `json:"version"`
	State   *State `json:"state"`
}

// Snapshot implements raft.FSM. It serializes under the read lock so Persist
// can run concurrently with later Applies.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	data, err := json.Marshal(snapshotEnvelope{Version: SnapshotVersion, State: f.state})
	if err != nil {
		return nil, fmt.Errorf("encoding snapshot: %w", err)
	}
	return &fsmSnapshot{data: data}, nil
}

// Restore implements raft.FSM.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	st, err := DecodeSnapshot(rc)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.state = st
	f.mu.Unlock()
	f.notify()
	return nil
}

// DecodeSnapshot reads and validates a snapshot written by Snapshot.
func DecodeSnapshot(r io.Reader) (*State, error) {
	env := snapshotEnvelope{State: NewState()}
	if err := json.NewDecoder(r).Decode(&env); err != nil {
		return nil, fmt.Errorf("decoding snapshot: %w", err)
	}
	if env.Version < 1 || env.Version > SnapshotVersion {
		return nil, fmt.Errorf("snapshot version %d (this node reads up to %d): %w", env.Version, SnapshotVersion, ErrSnapshotVersion)
	}
	st := env.State
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
	if err := st.Ledger.Validate(); err != nil {
		return nil, fmt.Errorf("snapshot ledger is inconsistent: %w", err)
	}
	return st, nil
}

type fsmSnapshot struct{ data []byte }

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s.data); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("writing snapshot: %w", err)
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() {}

// WaitApplied blocks until the FSM has applied the entry at index, or ctx
// ends. A follower uses it after forwarding a command so that it reads its
// own write.
func (f *FSM) WaitApplied(ctx context.Context, index uint64) error {
	for {
		ch := f.Watch()
		var applied uint64
		f.Read(func(s *State) { applied = s.Applied })
		if applied >= index {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}
