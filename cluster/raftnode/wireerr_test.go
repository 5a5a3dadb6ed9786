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
