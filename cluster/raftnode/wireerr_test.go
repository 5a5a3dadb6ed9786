package raftnode

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// TestRefusalsKeepTheirSentinels: an FSM refusal answers errors.Is for its
// fsm sentinel and, where callers know it as iceberg-go's, for that one too;
// on the leader (paired by the adapter) and on a follower that forwarded
// the command (through the wire code), with the same message.
func TestRefusalsKeepTheirSentinels(t *testing.T) {
	for _, tc := range []struct {
		fsm, iceberg error
	}{
		{fsm.ErrCommitFailed, table.ErrCommitFailed},
		{fsm.ErrNoSuchTable, catalog.ErrNoSuchTable},
		{fsm.ErrTableAlreadyExists, catalog.ErrTableAlreadyExists},
		{fsm.ErrNoSuchNamespace, catalog.ErrNoSuchNamespace},
		{fsm.ErrNamespaceAlreadyExists, catalog.ErrNamespaceAlreadyExists},
		{fsm.ErrNamespaceNotEmpty, catalog.ErrNamespaceNotEmpty},
		{fsm.ErrStaleCommitter, nil},
		{fsm.ErrUnknownNode, nil},
		{fsm.ErrNotEmpty, nil},
		{fsm.ErrNoSuchMapping, nil},
		{fsm.ErrMappingExists, nil},
		{fsm.ErrStaleRewind, nil},
		{ledger.ErrStaleEpoch, nil},
	} {
		refusal := fmt.Errorf("committing table t: %w", tc.fsm)
		leader := withIcebergSentinel(refusal)
		follower := fromWire(toWire(leader))
		for where, err := range map[string]error{"leader": leader, "follower": follower} {
			if !errors.Is(err, tc.fsm) {
				t.Errorf("%s: %v is not %v", where, err, tc.fsm)
			}
			if tc.iceberg != nil && !errors.Is(err, tc.iceberg) {
				t.Errorf("%s: %v is not iceberg-go's %v", where, err, tc.iceberg)
			}
			if err.Error() != refusal.Error() {
				t.Errorf("%s: message %q, want %q", where, err, refusal)
			}
			if IsRetryable(err) != IsRetryable(leader) {
				t.Errorf("%s: retryable %v, leader %v", where, IsRetryable(err), IsRetryable(leader))
			}
		}
		if tc.iceberg != nil && tc.fsm.Error() != tc.iceberg.Error() {
			t.Errorf("fsm's %q and iceberg-go's %q differ: messages changed", tc.fsm, tc.iceberg)
		}
	}
}

// TestRecordedRefusalCodesAreWireCodes: the FSM records a refusal in its
// proposal window by the code it crosses the internal RPC with, and a
// resent proposal's recorded refusal crosses the wire as the first did.
func TestRecordedRefusalCodesAreWireCodes(t *testing.T) {
	for _, r := range fsm.Refusals() {
		code, sentinel := r.Code, r.Err
		first := withIcebergSentinel(fmt.Errorf("refused: %w", sentinel))
		if got := toWire(first).Code; got != code {
			t.Errorf("%v: the FSM records code %q, the wire sends %q", sentinel, code, got)
		}
		again := withIcebergSentinel(fsm.ProposalResult{ID: "p", Code: code, Message: first.Error()}.Err())
		w := toWire(again)
		if w.Code != code || w.Message != first.Error() {
			t.Errorf("%s: the resend's answer crosses as %+v", code, w)
		}
		if err := fromWire(w); !errors.Is(err, sentinel) || IsRetryable(err) != IsRetryable(first) {
			t.Errorf("%s: the forwarding node sees %v (retryable %v)", code, err, IsRetryable(err))
		}
	}
}

// TestWireCodesAreStable: the codes are the wire format between versions;
// each keeps its sentinel, and none disappears (a newer node's code that an
// older one does not know loses its sentinel on that node).
func TestWireCodesAreStable(t *testing.T) {
	want := map[string]error{
		"not_leader": ErrNotLeader, "stale_committer": fsm.ErrStaleCommitter,
		"unsupported": fsm.ErrUnsupported, "unknown_node": fsm.ErrUnknownNode,
		"not_empty": fsm.ErrNotEmpty, "commit_failed": table.ErrCommitFailed,
		"stale_epoch": ledger.ErrStaleEpoch, "gap": ledger.ErrGap,
		"overlap": ledger.ErrOverlap, "not_assigned": ledger.ErrNotAssigned,
		"invalid_entry": ledger.ErrInvalidEntry, "unknown_entry": ledger.ErrUnknownEntry,
		"not_oldest": ledger.ErrNotOldest, "no_such_table": catalog.ErrNoSuchTable,
		"table_exists": catalog.ErrTableAlreadyExists, "no_such_namespace": catalog.ErrNoSuchNamespace,
		"namespace_exists":    catalog.ErrNamespaceAlreadyExists,
		"namespace_not_empty": catalog.ErrNamespaceNotEmpty,
		"leadership_lost":     raft.ErrLeadershipLost, "enqueue_timeout": raft.ErrEnqueueTimeout,
		"raft_shutdown": raft.ErrRaftShutdown, "not_member": ErrNotMember,
		"no_such_mapping": fsm.ErrNoSuchMapping, "mapping_exists": fsm.ErrMappingExists,
		"stale_rewind": fsm.ErrStaleRewind, "upgrade_required": fsm.ErrUpgradeRequired,
		"protocol_too_low": fsm.ErrProtocolTooLow,
	}
	if len(wireSentinels) != len(want) {
		t.Errorf("%d wire codes, want %d", len(wireSentinels), len(want))
	}
	for code, sentinel := range want {
		bare := fmt.Errorf("refused: %w", sentinel)
		if got := toWire(bare).Code; got != code {
			t.Errorf("%v crosses as %q, want %q", sentinel, got, code)
		}
		if err := fromWire(&wireError{Code: code, Message: "m"}); !errors.Is(err, sentinel) {
			t.Errorf("code %q arrives as %v, not %v", code, err, sentinel)
		}
	}
}
