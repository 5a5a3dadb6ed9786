package backend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/names"
	"github.com/floe-io/floe/proto/admin"
)

// Every write is validated here (api_cluster.go: members, errors shared by
// all writes; api_mappings.go; api_tables.go), then proposed through the
// node's Raft, which forwards it to the leader; the answer carries the index
// it committed at.

var _ admin.Backend = (*Backend)(nil)

// ready refuses API calls while the node is still joining.
func (b *Backend) ready() error {
	select {
	case <-b.started:
		return nil
	default:
		return fmt.Errorf("the node is still joining the raft group: %w", admin.ErrUnavailable)
	}
}

// propose applies a command and turns the cluster's refusals into the admin
// API's sentinels.
func (b *Backend) propose(ctx context.Context, c fsm.Command, what string) (admin.WriteResult, error) {
	if err := b.ready(); err != nil {
		return admin.WriteResult{}, err
	}
	idx, err := b.raft.Apply(ctx, c)
	if err != nil {
		// Not wrapped with what: a refusal names its command ("deleting
		// mapping clicks: no such mapping") and other errors say "applying
		// <command>"; what is the success message ("deleted mapping clicks").
		return admin.WriteResult{}, apiErr(err)
	}
	return admin.WriteResult{Index: idx, Message: what}, nil
}

// operatorCommand proposes one of the operator commands (PutMapping,
// DeleteMapping, PauseTable, RewindTable). The version gate of the
// proposer (raftnode encode: the command table's protocol level against the
// group's minimum registered level) refuses a command that a member's build
// may not know, as it does for every command; apiErr shows that refusal as
// a conflict naming the lagging members.
func (b *Backend) operatorCommand(ctx context.Context, c fsm.Command, what string) (admin.WriteResult, error) {
	res, err := b.propose(ctx, c, what)
	if err == nil {
		// Who changed what: the record an audit starts from.
		b.log.Info("operator command applied", "command", c.Type().String(), "what", what, "by", admin.Caller(ctx), "index", res.Index)
	}
	return res, err
}

// apiErr classifies an error for the admin API.
func apiErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fsm.ErrNoSuchMapping), errors.Is(err, catalog.ErrNoSuchTable), errors.Is(err, fsm.ErrUnknownNode):
		return fmt.Errorf("%w: %w", admin.ErrNotFound, err)
	case errors.Is(err, fsm.ErrMappingExists):
		return fmt.Errorf("%w: %w", admin.ErrExists, err)
	case errors.Is(err, fsm.ErrProtocolTooLow):
		return fmt.Errorf("%w: %w", admin.ErrConflict, admin.UpgradeError{Err: err})
	case errors.Is(err, fsm.ErrUpgradeRequired):
		return fmt.Errorf("%w: %w", admin.ErrUnavailable, admin.UpgradeError{Err: err})
	case errors.Is(err, ledger.ErrInvalidEntry):
		return fmt.Errorf("%w: %w", admin.ErrInvalid, err)
	case raftnode.IsRetryable(err), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", admin.ErrUnavailable, err)
	}
	return err
}

// memberExists checks that id names a member of the group.
func (b *Backend) memberExists(id string) error {
	if id == "" {
		return fmt.Errorf("%w: id: name a member", admin.ErrInvalid)
	}
	for _, m := range b.raft.Members() {
		if m.ID == id {
			return nil
		}
	}
	return fmt.Errorf("%w: member %s", admin.ErrNotFound, names.Preview(id))
}

// TransferLeadership implements admin.Backend; a follower forwards it to
// the leader. It answers once another node leads.
func (b *Backend) TransferLeadership(ctx context.Context, id string) (admin.WriteResult, error) {
	if err := b.ready(); err != nil {
		return admin.WriteResult{}, err
	}
	if id != "" {
		if err := b.memberExists(id); err != nil {
			return admin.WriteResult{}, err
		}
	}
	_, before := b.raft.Leader()
	if id != "" && id == before {
		return admin.WriteResult{Unchanged: true, Message: id + " already leads"}, nil
	}
	voters := 0
	for _, m := range b.raft.Members() {
		if m.Voter && m.ID != before {
			voters++
		}
	}
	if voters == 0 {
		return admin.WriteResult{}, fmt.Errorf("%w: id: there is no other voter to hand leadership to", admin.ErrConflict)
	}
	if err := b.raft.TransferLeadershipTo(ctx, id); err != nil {
		if errors.Is(err, fsm.ErrUnknownNode) {
			return admin.WriteResult{}, fmt.Errorf("%w: id: %w", admin.ErrConflict, err)
		}
		return admin.WriteResult{}, fmt.Errorf("%w: %w", admin.ErrUnavailable, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		if _, leader := b.raft.Leader(); leader != "" && leader != before && (id == "" || leader == id) {
			return admin.WriteResult{Index: b.raft.AppliedIndex(), Message: "leadership moved to " + leader}, nil
		}
		select {
		case <-wctx.Done():
			return admin.WriteResult{}, fmt.Errorf("%w: waiting for a new leader", admin.ErrUnavailable)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DrainNode implements admin.Backend.
func (b *Backend) DrainNode(ctx context.Context, id string) (admin.WriteResult, error) {
	if err := b.memberExists(id); err != nil {
		return admin.WriteResult{}, err
	}
	// The mark is an operator's, kept across the member's restarts, once
	// every member can hold that; before, it lasts until the member's
	// process restarts, as in older builds.
	var lowest int
	b.raft.FSM().Read(func(s *fsm.State) { lowest = s.MinProtocol() })
	return b.propose(ctx, fsm.DrainNode{ID: id, Draining: true, Operator: lowest >= fsm.ProtocolOperatorDrain}, "draining node "+id)
}

// UndrainNode implements admin.Backend: it clears a member's draining mark,
// so the assignment controller gives it work again. A member that drains
// itself (its process is shutting down) is refused: its process leaves
// the group whatever the mark says.
func (b *Backend) UndrainNode(ctx context.Context, id string) (admin.WriteResult, error) {
	if err := b.memberExists(id); err != nil {
		return admin.WriteResult{}, err
	}
	var (
		m      fsm.Member
		lowest int
	)
	b.raft.FSM().Read(func(s *fsm.State) {
		if p, ok := s.Nodes[id]; ok {
			m = *p
		}
		lowest = s.MinProtocol()
	})
	switch {
	case !m.Draining:
		return admin.WriteResult{Unchanged: true, Message: "node " + id + " is not draining"}, nil
	case !m.DrainedByOperator && lowest >= fsm.ProtocolOperatorDrain:
		return admin.WriteResult{}, fmt.Errorf("%w: node %s drains itself (its process is shutting down): there is no operator's mark to clear", admin.ErrConflict, id)
	}
	return b.propose(ctx, fsm.DrainNode{ID: id, Draining: false}, "undraining node "+id)
}

// RemoveNode implements admin.Backend. Removing the leader itself is
// refused: transfer leadership first.
func (b *Backend) RemoveNode(ctx context.Context, id string) (admin.WriteResult, error) {
	if err := b.memberExists(id); err != nil {
		return admin.WriteResult{}, err
	}
	if _, leader := b.raft.Leader(); leader == id {
		return admin.WriteResult{}, fmt.Errorf("%w: %s is the leader: transfer leadership first", admin.ErrConflict, id)
	}
	if err := b.raft.RemoveMember(ctx, id); err != nil {
		return admin.WriteResult{}, apiErr(fmt.Errorf("removing node %s: %w", id, err))
	}
	return admin.WriteResult{Index: b.raft.AppliedIndex(), Message: "removed node " + id}, nil
}

// Ready implements admin.Source: the node serves once it is a member of a
// group with a leader and its worker runs, and never while its FSM is halted
// at an entry its build does not know (upgrade required).
func (b *Backend) Ready() error {
	if h, halted := b.raft.FSM().Halted(); halted {
		return h // "upgrade required: log entry N has command type T ..."
	}
	select {
	case <-b.started:
	default:
		return errors.New("joining the raft group")
	}
	if addr, _ := b.raft.Leader(); addr == "" {
		return errors.New("no raft leader")
	}
	return nil
}
