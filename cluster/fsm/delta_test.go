package fsm_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/apache/iceberg-go/table"

	. "github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// TestCommitRecordsDeltaInOrder: a commit that records a Delta version must
// carry the sequence one past the table's last (1 first); a repeated or
// skipped sequence is refused as retryable and changes nothing; the
// version may start again (a log rebuilt after an operator deleted it);
// the recorded version survives a snapshot.
func TestCommitRecordsDeltaInOrder(t *testing.T) {
	f := seeded(t)
	key := ledger.TableKey([]string{"db", "orders"})
	committer := &ledger.Assignment{Node: "n1", Epoch: 1}
	meta := "file:///w/db/orders/metadata/00000-a.metadata.json"
	idx := uint64(10)
	for i, tc := range []struct {
		delta   *ledger.DeltaCommit
		refused bool
		want    *ledger.DeltaCommit // recorded after the step
	}{
		{&ledger.DeltaCommit{Sequence: 2, Version: 0}, true, nil}, // skips sequence 1
		{&ledger.DeltaCommit{Sequence: 0, Version: 0}, true, nil}, // no sequence
		{&ledger.DeltaCommit{Sequence: 1, Version: 1}, false, &ledger.DeltaCommit{Sequence: 1, Version: 1}},
		{&ledger.DeltaCommit{Sequence: 1, Version: 2}, true, &ledger.DeltaCommit{Sequence: 1, Version: 1}},  // repeated
		{nil, false, &ledger.DeltaCommit{Sequence: 1, Version: 1}},                                          // maintenance: kept
		{&ledger.DeltaCommit{Sequence: 2, Version: 5}, false, &ledger.DeltaCommit{Sequence: 2, Version: 5}}, // versions may jump
		{&ledger.DeltaCommit{Sequence: 3, Version: 1}, false, &ledger.DeltaCommit{Sequence: 3, Version: 1}}, // a rebuilt log
	} {
		idx++
		next := fmt.Sprintf("file:///w/db/orders/metadata/%05d-x.metadata.json", idx)
		err := apply(t, f, idx, CommitTables{Swaps: []TableSwap{{Table: key, Expected: meta, New: next}},
			Table: key, Committer: committer, At: int64(idx), Delta: tc.delta})
		if refused := err != nil; refused != tc.refused {
			t.Fatalf("step %d: %v, want refused %v", i, err, tc.refused)
		}
		if tc.refused && !errors.Is(err, table.ErrCommitFailed) {
			t.Fatalf("step %d: refusal %v is not retryable", i, err)
		}
		if !tc.refused {
			meta = next
		}
		f.Read(func(s *State) {
			got := s.Tables[key].Delta
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("step %d: recorded %+v, want %+v", i, got, tc.want)
			}
		})
	}
	g := NewFSM(nil)
	if err := g.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, f)))); err != nil {
		t.Fatal(err)
	}
	g.Read(func(s *State) {
		if d := s.Tables[key].Delta; d == nil || *d != (ledger.DeltaCommit{Sequence: 3, Version: 1}) {
			t.Fatalf("after restore: %+v", d)
		}
	})
}
