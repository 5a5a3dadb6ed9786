package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/offsetcheck"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/proto/admin"
)

// TestRewind rewinds a table to the earliest offsets through the admin
// backend, first with the append policy (every record is then in the table
// twice, and the status says why), then with the replace policy (the rows
// from the new position on are deleted before the replay, so the table again
// holds each offset once). An independent reader (iceberg-go's scan) counts
// every (partition, offset).
func TestRewind(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "rw")})
	dir := t.TempDir()
	cfg := testnode.Config(t, dir, kc.ListenAddrs(), []config.Table{{Topic: "rw", Namespace: "ops"}})
	ctx := context.Background()
	n, err := testnode.Start(ctx, cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	const total = 400
	var vals []string
	for i := range total {
		vals = append(vals, fmt.Sprintf(`{"i":%d}`, i))
	}
	testnode.Produce(t, cl, "rw", vals, 2)
	testnode.WaitRows(t, n, "ops.rw", total, time.Minute)
	waitCommitted(t, n, "ops.rw", map[int32]int64{0: total / 2, 1: total / 2})

	counts := func() map[string]map[int64]int {
		tbl, err := n.Catalog().LoadTable(ctx, []string{"ops", "rw"})
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := offsetcheck.Counts(ctx, tbl)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	expectEach := func(want int) {
		t.Helper()
		c := counts()
		for p := range 2 {
			offs := c[fmt.Sprintf("rw/%d", p)]
			if len(offs) != total/2 {
				t.Fatalf("rw/%d: %d distinct offsets, want %d", p, len(offs), total/2)
			}
			for o, k := range offs {
				if k != want || o < 0 || o >= total/2 {
					t.Fatalf("rw/%d offset %d appears %d times, want %d", p, o, k, want)
				}
			}
		}
	}
	expectEach(1)

	// Bad requests are refused with the field named, and change nothing.
	for _, bad := range []struct {
		req  admin.RewindRequest
		want string
	}{
		{admin.RewindRequest{Table: "ops.rw", Policy: admin.ReplayAppend}, "target"},
		{admin.RewindRequest{Table: "ops.rw", Earliest: true}, "policy"},
		{admin.RewindRequest{Table: "ops.rw", Policy: admin.ReplayAppend, Offsets: []status.PartitionOffset{{Topic: "rw", Partition: 7}}}, "offsets[0].partition"},
		{admin.RewindRequest{Table: "ops.nope", Earliest: true, Policy: admin.ReplayAppend}, "ops.nope"},
	} {
		if _, err := n.RewindTable(ctx, bad.req); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Fatalf("rewind %+v: %v, want an error naming %s", bad.req, err, bad.want)
		}
	}

	// Append: everything again.
	res, err := n.RewindTable(ctx, admin.RewindRequest{Table: "ops.rw", Earliest: true, Policy: admin.ReplayAppend})
	if err != nil {
		t.Fatal(err)
	}
	if res.Index == 0 || res.Rewind.Generation != 1 || len(res.Rewind.To) != 2 || res.Rewind.To[0].Offset != 0 {
		t.Fatalf("rewind answer %+v", res)
	}
	waitCommitted(t, n, "ops.rw", map[int32]int64{0: total / 2, 1: total / 2})
	waitTableRows(t, n, "ops.rw", 2*total)
	expectEach(2)
	tr := nodeTable(t, n, "ops.rw")
	if tr.Rewind == nil || !strings.Contains(tr.Reason, "appear twice") || tr.Rewind.Policy != admin.ReplayAppend {
		t.Fatalf("status after an append rewind: reason %q rewind %+v", tr.Reason, tr.Rewind)
	}

	// Replace: the rows from offset 0 on go, then the replay lands once.
	// The caller (what the admin API records) stays on the rewind.
	res, err = n.RewindTable(admin.WithCaller(ctx, "cert:CN=ops"), admin.RewindRequest{Table: "ops.rw", Earliest: true, Policy: admin.ReplayReplace})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rewind.Generation != 2 || res.Rewind.Policy != admin.ReplayReplace {
		t.Fatalf("rewind answer %+v", res)
	}
	waitCommitted(t, n, "ops.rw", map[int32]int64{0: total / 2, 1: total / 2})
	waitTableRows(t, n, "ops.rw", total)
	expectEach(1)
	tr = nodeTable(t, n, "ops.rw")
	if tr.Rewind == nil || !tr.Rewind.ReplaceDone || !strings.Contains(tr.Reason, "replayed once") || tr.Rewind.By != "cert:CN=ops" ||
		!strings.Contains(tr.Rewind.Describe, "by cert:CN=ops") {
		t.Fatalf("status after a replace rewind: reason %q rewind %+v", tr.Reason, tr.Rewind)
	}

	// Explicit offsets with replace: only partition 1 from 150 on.
	if _, err := n.RewindTable(ctx, admin.RewindRequest{Table: "ops.rw", Policy: admin.ReplayReplace,
		Offsets: []status.PartitionOffset{{Topic: "rw", Partition: 1, Offset: 150}}}); err != nil {
		t.Fatal(err)
	}
	waitCommitted(t, n, "ops.rw", map[int32]int64{0: total / 2, 1: total / 2})
	waitTableRows(t, n, "ops.rw", total)
	expectEach(1)
}

// waitCommitted waits until the table's committed offsets reach want.
func waitCommitted(t *testing.T, n *node.Node, table string, want map[int32]int64) {
	t.Helper()
	wait.Until(t, time.Minute, table+" committed offsets", func() error {
		tr := nodeTable(t, n, table)
		got := map[int32]int64{}
		for _, p := range tr.Partitions {
			got[p.Partition] = p.Committed
		}
		ok := true
		for p, w := range want {
			if got[p] != w {
				ok = false
			}
		}
		// A rewind's position moves back first: also wait until nothing is
		// pending and a replace delete is done.
		if ok && tr.PendingEntries == 0 && (tr.Rewind == nil || tr.Rewind.Policy != admin.ReplayReplace || tr.Rewind.ReplaceDone) {
			return nil
		}
		return fmt.Errorf("committed %v pending %d, want %v (state %s %s)", got, tr.PendingEntries, want, tr.State, tr.Reason)
	})
}

// waitTableRows waits until the replicated row count of a table is want.
func waitTableRows(t *testing.T, n *node.Node, table string, want int64) {
	t.Helper()
	wait.Until(t, time.Minute, table+" rows", func() error {
		if tr := nodeTable(t, n, table); tr.Rows != want {
			return fmt.Errorf("%d rows, want %d (state %s %s)", tr.Rows, want, tr.State, tr.Reason)
		}
		return nil
	})
}

func nodeTable(t *testing.T, n *node.Node, table string) status.TableReport {
	t.Helper()
	rep, err := n.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := tableReport(rep, table) // failures_test.go
	if !ok {
		t.Fatalf("no table %s in the report", table)
	}
	return tr
}
