package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/recovery"
)

// Drain is the graceful leave on SIGTERM, in the order that loses no work
// and repeats none: stop fetching, flush and record what is buffered, commit
// the tables this node commits, let the leader move this node's partitions
// and committer roles to the others, hand Raft leadership over if this node
// leads, and leave the configuration. ctx bounds it (the drain timeout);
// whatever is left undone when it ends is safe anyway: uncommitted files are
// re-fetched by the partitions' next holders, fenced by their epochs.
func (n *Node) Drain(ctx context.Context) error {
	start := time.Now()
	log := n.log.With("component", "drain")
	select {
	case <-n.started:
	default:
		return nil // never joined: nothing to hand over
	}
	if n.othersLive() == 0 {
		log.Info("no other live node to take the work: stopping without leaving the group")
		return nil
	}
	log.Info("draining: flushing and committing")
	if err := n.worker.Drain(ctx); err != nil {
		log.Warn("flushing before leaving", "err", err)
	}
	if err := n.raft.MarkDraining(ctx); err != nil {
		return fmt.Errorf("draining: %w", err)
	}
	log.Info("draining: handing partitions and committer roles over", "flushed_in", time.Since(start).Round(time.Millisecond))
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for !n.holdsNothing() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("draining: work still assigned here after %s: %w", time.Since(start).Round(time.Millisecond), ctx.Err())
		case <-t.C:
		}
	}
	if err := n.raft.Leave(ctx); err != nil {
		return fmt.Errorf("draining: %w", err)
	}
	log.Info("drained and left the group", "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// othersLive counts registered members other than this one that are not
// draining.
func (n *Node) othersLive() int {
	c := 0
	n.raft.FSM().Read(func(s *fsm.State) {
		for id, m := range s.Nodes {
			if id != n.cfg.Node.ID && !m.Draining {
				c++
			}
		}
	})
	return c
}

// holdsNothing reports whether no partition of a mapped topic and no
// committer role is assigned to this node any more.
func (n *Node) holdsNothing() bool {
	if len(n.state.Assigned(n.cfg.Node.ID)) > 0 {
		return false
	}
	held := false
	n.raft.FSM().Read(func(s *fsm.State) {
		for _, a := range s.Committers {
			if a.Node == n.cfg.Node.ID {
				held = true
			}
		}
	})
	return !held
}

// recoverState installs the state backed up in the warehouse when this
// cluster is new and empty (floe serve --recover after every node's disk was
// lost). Any node may be started with --recover; the leader restores, the
// others wait for the restored state. A cluster that has state already is
// left alone, so the flag is harmless on later restarts.
func (n *Node) recoverState(ctx context.Context) error {
	log := n.log.With("component", "recover")
	for {
		empty := true
		n.raft.FSM().Read(func(s *fsm.State) { empty = len(s.Tables) == 0 && len(s.Sources) == 0 })
		if !empty {
			log.Info("the cluster has state: nothing to recover")
			return nil
		}
		if n.raft.IsLeader() {
			st, err := recovery.Recover(ctx, n.cfg.Warehouse.Location, IOProps(n.cfg.Warehouse), n.log)
			if errors.Is(err, recovery.ErrNoBackup) {
				// A first start with --recover (templates may always pass
				// it): nothing to restore.
				log.Warn("--recover: no state backup in the warehouse; starting empty", "err", err)
				return nil
			}
			if err != nil {
				return fmt.Errorf("recovering from the warehouse backup: %w", err)
			}
			if _, err := n.raft.Apply(ctx, fsm.RestoreState{State: st}); err != nil && !errors.Is(err, fsm.ErrNotEmpty) {
				return fmt.Errorf("installing the recovered state: %w", err)
			}
			log.Info("recovered the state from the warehouse", "tables", len(st.Tables), "sources", len(st.Sources))
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the leader to recover the state: %w", ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// guardBackup refuses to start a new, empty cluster over a warehouse whose
// backup holds tables, unless --recover was given: the new cluster would
// recreate those tables from scratch and overwrite the backup that could
// restore them. The local state is first brought up to date with the
// leader's, so a node joining an existing cluster does not mistake its
// not-yet-replicated state for an empty one.
func (n *Node) guardBackup(ctx context.Context) error {
	// Catching up may take a few tries: right after an election the
	// leader's membership record may not have reached this node yet. If it
	// never succeeds the guard is skipped: it protects, it is not needed
	// to run.
	deadline := time.Now().Add(30 * time.Second)
	for {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := n.raft.Sync(sctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			n.log.Warn("cannot catch up with the leader to check the warehouse's state backup; starting", "err", err)
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	empty := true
	n.raft.FSM().Read(func(s *fsm.State) { empty = len(s.Tables) == 0 && len(s.Sources) == 0 })
	if !empty {
		return nil
	}
	st, err := recovery.ReadBackup(ctx, n.cfg.Warehouse.Location, IOProps(n.cfg.Warehouse))
	if errors.Is(err, recovery.ErrNoBackup) {
		return nil
	}
	if err != nil {
		n.log.Warn("cannot read the warehouse's state backup; starting", "err", err)
		return nil
	}
	if len(st.Tables) == 0 && len(st.Sources) == 0 {
		return nil
	}
	return fmt.Errorf("this cluster is new and empty but %s holds the state of an earlier cluster (%d tables): "+
		"start with --recover to restore it, or delete that file to start anew", recovery.BackupLocation(n.cfg.Warehouse.Location), len(st.Tables))
}
