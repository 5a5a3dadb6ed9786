package fsm

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// FSM is the replicated state machine, without Raft: entries come in as
// (index, bytes) from the Raft adapter (package raftnode), which also turns
// snapshots into Raft's types. Lock order: FSM.mu is a leaf lock; nothing is
// called while holding it except pure state functions.
type FSM struct {
	mu      sync.RWMutex
	state   *State
	changed chan struct{} // closed and replaced after every applied entry
	// tables holds, per table key, a channel closed at the next entry that
	// touches the table; made on demand by WatchTable, dropped when closed.
	tables map[string]chan struct{}
}

// New returns an FSM with an empty state.
func New() *FSM {
	return &FSM{state: NewState(), changed: make(chan struct{}), tables: map[string]chan struct{}{}}
}

// Apply applies the command entry data at log index. A command of a type
// this version does not know is skipped and counted (State.Skipped): a newer
// leader's log keeps applying during a rolling upgrade. The error is the
// FSM's refusal; a refused entry changes nothing but the applied index (and
// the proposal window). An entry whose proposal id is in the window
// (State.Proposals) is a resend: it is not applied again and returns the
// first one's result. Every entry with an id is recorded, refused, skipped
// or applied, so every replica's window holds the same ids.
func (f *FSM) Apply(index uint64, data []byte) error {
	if len(data) == 0 {
		return fmt.Errorf("empty command at index %d", index)
	}
	var t touched
	f.mu.Lock()
	defer func() { f.notify(t) }()
	defer f.mu.Unlock()
	f.state.Applied = index
	id := ProposalID(data)
	if res, ok := f.state.Proposals.Lookup(id); ok {
		// A resend of a proposal applied already (its answer was lost):
		// not applied again; it answers as the first did.
		return res.Err()
	}
	var err error
	t, err = applyCommand(f.state, data)
	if id != "" {
		if f.state.Proposals == nil {
			f.state.Proposals = &ProposalWindow{}
		}
		f.state.Proposals.add(resultOf(id, index, err))
	}
	return err
}

// applyCommand applies one entry to s. Watchers of the touched tables wake
// even when the entry is refused: a refusal changes nothing, and a spurious
// wake only costs a re-read.
func applyCommand(s *State, data []byte) (touched, error) {
	def, ok := commands[CommandType(data[0])]
	if !ok {
		s.Skipped++
		return touched{}, nil
	}
	return def.apply(s, data[1:])
}

// notify wakes the global watchers and those of the touched tables.
func (f *FSM) notify(t touched) {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.changed)
	f.changed = make(chan struct{})
	if t.all {
		for _, ch := range f.tables {
			close(ch)
		}
		clear(f.tables)
		return
	}
	for _, key := range t.keys {
		if ch, ok := f.tables[key]; ok {
			close(ch)
			delete(f.tables, key)
		}
	}
}

// Watch returns a channel closed at the next applied entry, whatever it
// changed. Loops that care about one table use WatchTable; Watch is for
// those that need every change (assignment re-plan, membership, WaitApplied).
func (f *FSM) Watch() <-chan struct{} {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.changed
}

// WatchTable returns a channel closed at the next applied entry that may
// change the state of table key: its catalog pointer, ledger (records,
// commits, offsets), committer, partition assignments, sources routing into
// it, resume, pause, rewind, schema requests and sync records; and a whole
// new state (RestoreState, a snapshot restore). Membership, namespace,
// mapping and backup entries do not close it. Take the channel before
// reading the state, so a change between the read and the wait is not lost.
func (f *FSM) WatchTable(key string) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ok := f.tables[key]
	if !ok {
		ch = make(chan struct{})
		f.tables[key] = ch
	}
	return ch
}

// Read runs fn with the current state under the read lock. fn must not keep
// references to the state or mutate it.
func (f *FSM) Read(fn func(*State)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fn(f.state)
}

// Snapshot returns a deep copy of the state, taken under the read lock.
// Encoding it (EncodeSnapshot) is left to the caller, outside the lock:
// Raft calls Snapshot on its FSM goroutine, so every Apply waits while the
// lock is held, and copying costs a fraction of encoding
// (BenchmarkSnapshotLockHeld).
func (f *FSM) Snapshot() *State {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.state.Clone()
}

// Restore replaces the state with the snapshot read from r and wakes every
// watcher.
func (f *FSM) Restore(r io.Reader) error {
	st, err := DecodeSnapshot(r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.state = st
	f.mu.Unlock()
	f.notify(touched{all: true})
	return nil
}

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
