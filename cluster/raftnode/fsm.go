package raftnode

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
)

// RaftFSM adapts the pure state machine (package fsm) to raft.FSM: it skips
// Raft's own entries, logs skipped commands and, once, the FSM's halt (an
// entry this build does not know; upgrade required), pairs refusals with
// their iceberg-go sentinels and wraps snapshots in Raft's types (a halted
// FSM refuses to snapshot, and Raft then keeps its log).
type RaftFSM struct {
	f   *fsm.FSM
	log *slog.Logger
	// mu serializes Raft's FSM goroutine (Apply, Restore) with a resume
	// (resume.go), which installs the leader's state and replays the log
	// behind it with no entry applied in between.
	mu sync.Mutex
	// halted: the halt was logged.
	halted bool
	// last is the index of the last entry Raft handed over (after a
	// restore, the restored state's; the entries between are Raft's own).
	last uint64
	// handed is broadcast when last moves (a resume waits on it).
	handed *sync.Cond
}

// NewRaftFSM returns the raft.FSM of f.
func NewRaftFSM(f *fsm.FSM, log *slog.Logger) *RaftFSM {
	if log == nil {
		log = slog.Default()
	}
	a := &RaftFSM{f: f, log: log}
	a.handed = sync.NewCond(&a.mu)
	return a
}

// ApplyResult is what Apply returns for every entry: the refusal, if any.
type ApplyResult struct {
	Err error
}

// Apply implements raft.FSM.
func (a *RaftFSM) Apply(l *raft.Log) any {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last = l.Index
	a.handed.Broadcast()
	return a.applyLocked(l)
}

func (a *RaftFSM) applyLocked(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return ApplyResult{}
	}
	if len(l.Data) > 0 && !a.f.Known(fsm.CommandType(l.Data[0])) && fsm.CommandType(l.Data[0])&fsm.IgnorableFlag != 0 {
		// Written by a newer node and marked ignorable: the FSM skips it.
		a.log.Warn("skipping unknown raft command", "type", l.Data[0]&^byte(fsm.IgnorableFlag), "index", l.Index)
	}
	err := a.f.Apply(l.Index, l.Data)
	if h, ok := a.f.Halted(); ok && !a.halted {
		a.halted = true
		a.log.Error("upgrade required: this node stopped applying the raft log at an entry its build does not know; restart it on a newer build",
			"index", h.Index, "type", uint8(h.Type), "protocol", fsm.ProtocolLevel)
	}
	return ApplyResult{Err: withIcebergSentinel(err)}
}

// Snapshot implements raft.FSM. It runs on Raft's FSM goroutine, so it
// only takes a copy of the state (under the FSM's read lock); Persist,
// which Raft runs concurrently with later Applies, encodes it.
func (a *RaftFSM) Snapshot() (raft.FSMSnapshot, error) {
	// Under mu: Raft labels the snapshot with the last index it handed to
	// Apply, so it must not see a resume's state before the replay behind
	// it (resume.go).
	a.mu.Lock()
	defer a.mu.Unlock()
	st, err := a.f.Snapshot()
	if err != nil {
		return nil, err
	}
	return &fsmSnapshot{state: st}, nil
}

// Restore implements raft.FSM.
func (a *RaftFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.f.Restore(rc); err != nil {
		return err
	}
	a.f.Read(func(s *fsm.State) { a.last = s.Applied })
	a.handed.Broadcast()
	return nil
}

// fsmSnapshot is a copy of the state no one else references: Persist may
// read it while the FSM applies further entries.
type fsmSnapshot struct{ state *fsm.State }

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	data, err := fsm.EncodeSnapshot(s.state)
	if err != nil {
		_ = sink.Cancel()
		return err
	}
	if _, err := sink.Write(data); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("writing snapshot: %w", err)
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() {}

// icebergTwins pairs the FSM's refusals with the iceberg-go sentinels that
// callers (iceberg-go's commit retry, the admin API, the catalog) test for.
var icebergTwins = []struct{ fsm, iceberg error }{
	{fsm.ErrCommitFailed, table.ErrCommitFailed},
	{fsm.ErrNoSuchTable, catalog.ErrNoSuchTable},
	{fsm.ErrTableAlreadyExists, catalog.ErrTableAlreadyExists},
	{fsm.ErrNoSuchNamespace, catalog.ErrNoSuchNamespace},
	{fsm.ErrNamespaceAlreadyExists, catalog.ErrNamespaceAlreadyExists},
	{fsm.ErrNamespaceNotEmpty, catalog.ErrNamespaceNotEmpty},
}

// pairedError is an FSM refusal that also matches its iceberg-go twin; its
// message is the refusal's own (the twins' messages are the same words).
type pairedError struct{ err, twin error }

func (e *pairedError) Error() string   { return e.err.Error() }
func (e *pairedError) Unwrap() []error { return []error{e.err, e.twin} }

// icebergTwin returns the iceberg-go sentinel paired with an FSM sentinel,
// nil where it has none.
func icebergTwin(sentinel error) error {
	for _, t := range icebergTwins {
		if t.fsm == sentinel {
			return t.iceberg
		}
	}
	return nil
}

func withIcebergSentinel(err error) error {
	if err == nil {
		return nil
	}
	for _, t := range icebergTwins {
		if errors.Is(err, t.fsm) {
			return &pairedError{err: err, twin: t.iceberg}
		}
	}
	return err
}
