package node

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

// The admin API's backend (admin.Backend) is implemented by Node in
// api_cluster.go (members, errors shared by all writes), api_mappings.go and
// api_tables.go. Every write is validated here, then proposed through the
// node's Raft, which forwards it to the leader; the answer carries the index
// it committed at.

var _ admin.Backend = (*Node)(nil)

// ready refuses API calls while the node is still joining.
func (n *Node) ready() error {
	select {
	case <-n.started:
		return nil
	default:
		return fmt.Errorf("the node is still joining the raft group: %w", admin.ErrUnavailable)
	}
}

// propose applies a command and turns the cluster's refusals into the admin
// API's sentinels.
func (n *Node) propose(ctx context.Context, c fsm.Command, what string) (admin.WriteResult, error) {
	if err := n.ready(); err != nil {
		return admin.WriteResult{}, err
	}
	idx, err := n.raft.Apply(ctx, c)
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
func (n *Node) operatorCommand(ctx context.Context, c fsm.Command, what string) (admin.WriteResult, error) {
	res, err := n.propose(ctx, c, what)
	if err == nil {
		// Who changed what: the record an audit starts from.
		n.log.Info("operator command applied", "command", c.Type().String(), "what", what, "by", admin.Caller(ctx), "index", res.Index)
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
		return fmt.Errorf("%w: %w", admin.ErrConflict, err)
	case errors.Is(err, fsm.ErrUpgradeRequired):
		return fmt.Errorf("%w: %w", admin.ErrUnavailable, err)
	case errors.Is(err, ledger.ErrInvalidEntry):
		return fmt.Errorf("%w: %w", admin.ErrInvalid, err)
	case raftnode.IsRetryable(err), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", admin.ErrUnavailable, err)
	}
	return err
}

// memberExists checks that id names a member of the group.
func (n *Node) memberExists(id string) error {
	if id == "" {
		return fmt.Errorf("%w: id: name a member", admin.ErrInvalid)
	}
	for _, m := range n.raft.Members() {
		if m.ID == id {
			return nil
		}
	}
	return fmt.Errorf("%w: member %s", admin.ErrNotFound, names.Preview(id))
}

// TransferLeadership implements admin.Backend; a follower forwards it to
// the leader. It answers once another node leads.
func (n *Node) TransferLeadership(ctx context.Context, id string) (admin.WriteResult, error) {
	if err := n.ready(); err != nil {
		return admin.WriteResult{}, err
	}
	if id != "" {
		if err := n.memberExists(id); err != nil {
			return admin.WriteResult{}, err
		}
	}
	_, before := n.raft.Leader()
	if id != "" && id == before {
		return admin.WriteResult{Unchanged: true, Message: id + " already leads"}, nil
	}
	voters := 0
	for _, m := range n.raft.Members() {
		if m.Voter && m.ID != before {
			voters++
		}
	}
	if voters == 0 {
		return admin.WriteResult{}, fmt.Errorf("%w: id: there is no other voter to hand leadership to", admin.ErrConflict)
	}
	if err := n.raft.TransferLeadershipTo(ctx, id); err != nil {
		if errors.Is(err, fsm.ErrUnknownNode) {
			return admin.WriteResult{}, fmt.Errorf("%w: id: %w", admin.ErrConflict, err)
		}
		return admin.WriteResult{}, fmt.Errorf("%w: %w", admin.ErrUnavailable, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		if _, leader := n.raft.Leader(); leader != "" && leader != before && (id == "" || leader == id) {
			return admin.WriteResult{Index: n.raft.AppliedIndex(), Message: "leadership moved to " + leader}, nil
		}
		select {
		case <-wctx.Done():
			return admin.WriteResult{}, fmt.Errorf("%w: waiting for a new leader", admin.ErrUnavailable)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DrainNode implements admin.Backend.
func (n *Node) DrainNode(ctx context.Context, id string) (admin.WriteResult, error) {
	if err := n.memberExists(id); err != nil {
		return admin.WriteResult{}, err
	}
	return n.propose(ctx, fsm.DrainNode{ID: id, Draining: true}, "draining node "+id)
}

// RemoveNode implements admin.Backend. Removing the leader itself is
// refused: transfer leadership first.
func (n *Node) RemoveNode(ctx context.Context, id string) (admin.WriteResult, error) {
	if err := n.memberExists(id); err != nil {
		return admin.WriteResult{}, err
	}
	if _, leader := n.raft.Leader(); leader == id {
		return admin.WriteResult{}, fmt.Errorf("%w: %s is the leader: transfer leadership first", admin.ErrConflict, id)
	}
	if err := n.raft.RemoveMember(ctx, id); err != nil {
		return admin.WriteResult{}, apiErr(fmt.Errorf("removing node %s: %w", id, err))
	}
	return admin.WriteResult{Index: n.raft.AppliedIndex(), Message: "removed node " + id}, nil
}
