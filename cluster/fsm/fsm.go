package fsm

import (
	"context"
	"fmt"
	"io"
	"maps"
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
	// table is the command table this FSM applies: commands, less what
	// the options dropped. Never changed after New.
	table map[CommandType]commandDef
	// halt is set at the first entry of an unknown type without the
	// ignorable bit; from then on Apply changes nothing.
	halt *Halt
	// haltCh is closed when the FSM halts.
	haltCh chan struct{}
}

// New returns an FSM with an empty state.
func New(opts ...Option) *FSM {
	table := maps.Clone(commands)
	for _, o := range opts {
		o(table)
	}
	return &FSM{state: NewState(), changed: make(chan struct{}), tables: map[string]chan struct{}{}, table: table, haltCh: make(chan struct{})}
}

// Apply applies the command entry data at log index. A command of a type
// this build does not know is skipped and counted (State.Skipped) when its
// type byte carries IgnorableFlag; without it the FSM halts: it records
// where (Halted) and refuses every entry from then on with
// ErrUpgradeRequired, changing nothing, not even the applied index, so
// that a restart on a newer build replays the log from there and ends as
// its peers did. Otherwise the error is the FSM's refusal; a refused entry
// changes nothing but the applied index (and the proposal window). An entry whose proposal id is in the window
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
	if f.halt != nil {
		return *f.halt
	}
	typ, ignorable := splitType(data[0])
	def, known := f.table[typ]
	if !known && !ignorable {
		f.halt = &Halt{Index: index, Type: typ}
		close(f.haltCh)
		t = touched{all: true} // waiters see the halt
		return *f.halt
	}
	f.state.Applied = index
	id := ProposalID(data)
	if res, ok := f.state.Proposals.Lookup(id); ok {
		// A resend of a proposal applied already (its answer was lost):
		// not applied again; it answers as the first did.
		return res.Err()
	}
	var err error
	t, err = applyCommand(f.state, def, known, data[1:])
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
func applyCommand(s *State, def commandDef, known bool, payload []byte) (touched, error) {
	if !known {
		s.Skipped++ // ignorable, written by a newer build
		return touched{}, nil
	}
	return def.apply(s, payload)
}

// Halted returns where the FSM stopped applying, if it did.
func (f *FSM) Halted() (Halt, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.halt == nil {
		return Halt{}, false
	}
	return *f.halt, true
}

// WatchHalt returns a channel closed once the FSM is halted (at once if it
// is).
func (f *FSM) WatchHalt() <-chan struct{} {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.haltCh
}

// Known reports whether this FSM applies commands of type t (the ignorable
// bit aside).
func (f *FSM) Known(t CommandType) bool {
	_, ok := f.table[t&^IgnorableFlag]
	return ok
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
//
// A halted FSM refuses: Raft labels a snapshot with the last index it
// handed to Apply, and would then compact the log, so a snapshot now would
// claim entries this FSM did not apply and a restart on a newer build could
// no longer replay them.
func (f *FSM) Snapshot() (*State, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.halt != nil {
		return nil, fmt.Errorf("snapshot refused: %w", *f.halt)
	}
	return f.state.Clone(), nil
}

// Restore replaces the state with the snapshot read from r and wakes every
// watcher.
func (f *FSM) Restore(r io.Reader) error {
	st, err := DecodeSnapshot(r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	// A halt outlives a restore: a snapshot that covers the entry this
	// build could not apply was written by a build that knows it, and may
	// hold state this build cannot read. A restart or Resume, after
	// DecodeLossless, ends a halt.
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
		if h, halted := f.Halted(); halted {
			return fmt.Errorf("waiting for index %d: %w", index, h)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}
