package raftnode

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc"

	"github.com/floe-io/floe/cluster/fsm"
)

// A halted node (fsm.Halt: an entry its build does not know) resumes
// without a restart once the leader's state holds nothing its build cannot
// read (fsm.DecodeLossless, State.ContentLevel): while halted it asks the
// leader for its state every ResumeEvery, installs it when it can, and
// replays its own log behind it. Raft would never send it a snapshot: it
// holds every entry, it only cannot apply one.

// maxStateBytes caps the state a halted node accepts from the leader (the
// gRPC default of 4 MiB is below a cluster of a few thousand tables).
const maxStateBytes = 256 << 20

// StateRequest asks the leader for its state, for a halted node of
// protocol level Protocol.
type StateRequest struct {
	Protocol int `json:"protocol"`
}

// StateResponse is the leader's state as a snapshot, or without it when
// the content needs a higher level than the asker's (Level says which).
type StateResponse struct {
	Snapshot []byte     `json:"snapshot,omitempty"`
	Level    int        `json:"level"`
	Applied  uint64     `json:"applied"`
	Err      *wireError `json:"err,omitempty"`
}

func (s internalService) rpcState(_ context.Context, in *StateRequest) (*StateResponse, error) {
	n := s.n
	if n.raft.State() != raft.Leader {
		return &StateResponse{Err: toWire(ErrNotLeader)}, nil
	}
	st, err := n.fsm.Snapshot() // refused while the leader is halted too
	if err != nil {
		return &StateResponse{Err: toWire(err)}, nil
	}
	out := &StateResponse{Level: st.ContentLevel(), Applied: st.Applied}
	if out.Level > in.Protocol {
		return out, nil
	}
	if out.Snapshot, err = fsm.EncodeSnapshot(st); err != nil {
		return &StateResponse{Err: toWire(err)}, nil
	}
	return out, nil
}

// resumeWhileHalted runs for the node's life: each time the FSM halts it
// asks the leader until it resumes, backing off to 8 times ResumeEvery
// while the leader's state is one it cannot hold.
func (n *Node) resumeWhileHalted() {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for {
			select {
			case <-n.stop:
				return
			case <-n.fsm.WatchHalt():
			}
			wait := n.cfg.ResumeEvery
			for {
				select {
				case <-n.stop:
					return
				case <-time.After(wait):
				}
				err := n.tryResume()
				if err == nil {
					n.resumeProblem.Store("")
					break
				}
				if prev, _ := n.resumeProblem.Swap(err.Error()).(string); prev != err.Error() {
					n.log.Warn("halted: cannot resume from the leader's state yet", "err", err)
				}
				wait = min(2*wait, 8*n.cfg.ResumeEvery)
			}
		}
	}()
}

// ResumeProblem says why a halted node has not resumed from the leader's
// state at its last try; "" when it is not halted or has not tried.
func (n *Node) ResumeProblem() string {
	s, _ := n.resumeProblem.Load().(string)
	return s
}

// tryResume asks the leader once. nil: the node is not halted (any more).
func (n *Node) tryResume() error {
	h, halted := n.fsm.Halted()
	if !halted {
		return nil
	}
	_, leader := n.raft.LeaderWithID()
	addr := n.rpcAddrOf(string(leader))
	if addr == "" || string(leader) == n.cfg.ID {
		return fmt.Errorf("asking for the leader's state: %w", ErrNotLeader)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var resp StateResponse
	if err := n.clients.call(ctx, addr, "State", &StateRequest{Protocol: n.protocol()}, &resp, grpc.MaxCallRecvMsgSize(maxStateBytes)); err != nil {
		return fmt.Errorf("asking %s for its state: %w", leader, err)
	}
	if err := fromWire(resp.Err); err != nil {
		return fmt.Errorf("asking %s for its state: %w", leader, err)
	}
	if resp.Snapshot == nil {
		return fmt.Errorf("the leader's state needs protocol level %d, this node states %d", resp.Level, n.protocol())
	}
	if resp.Applied < h.Index {
		return fmt.Errorf("the leader's state (index %d) does not reach the halted entry %d yet", resp.Applied, h.Index)
	}
	st, err := fsm.DecodeLossless(resp.Snapshot)
	if err != nil {
		return fmt.Errorf("the leader's state: %w", err)
	}
	resumed, err := n.sm.resume(st, n.store)
	if err != nil {
		return err
	}
	if resumed {
		n.log.Warn("resumed: this halted node took the leader's state and applies the log again",
			"halted_at", h.Index, "state_index", st.Applied, "protocol", n.protocol())
	}
	return nil
}

func (n *Node) protocol() int {
	if n.cfg.Protocol > 0 {
		return n.cfg.Protocol
	}
	return fsm.ProtocolLevel
}

// resume installs st in the halted FSM and applies the entries Raft handed
// over after st's index, read back from the log, with Raft's FSM goroutine
// (Apply, Snapshot) held off. It first waits until Raft has handed over
// st's index, so the state is never ahead of the index Raft labels its
// snapshots with (a snapshot of a state ahead of its label would have any
// node that installs it apply the entries between twice). It reads every
// entry to replay before it changes anything: a log that lost one (it
// cannot, while the FSM refuses snapshots) leaves the node halted.
func (a *RaftFSM) resume(st *fsm.State, logs raft.LogStore) (bool, error) {
	deadline := time.Now().Add(10 * time.Second)
	wake := time.AfterFunc(10*time.Second, func() { a.mu.Lock(); a.handed.Broadcast(); a.mu.Unlock() })
	defer wake.Stop()
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.last < st.Applied {
		if !time.Now().Before(deadline) {
			return false, fmt.Errorf("resuming at index %d: Raft handed over only up to %d", st.Applied, a.last)
		}
		a.handed.Wait() // Apply broadcasts each entry Raft hands over
	}
	var replay []*raft.Log
	for i := st.Applied + 1; i <= a.last; i++ {
		l := new(raft.Log)
		if err := logs.GetLog(i, l); err != nil {
			return false, fmt.Errorf("reading log entry %d to replay after the leader's state: %w", i, err)
		}
		replay = append(replay, l)
	}
	resumed, err := a.f.Resume(st)
	if err != nil || !resumed {
		return false, err
	}
	a.halted = false
	for _, l := range replay {
		a.applyLocked(l)
	}
	return true, nil
}
