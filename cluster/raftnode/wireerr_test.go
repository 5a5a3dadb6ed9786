package raftnode

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/ledger"
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
	for code, sentinel := range fsm.RefusalCodes() {
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
