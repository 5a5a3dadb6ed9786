package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/offsetcheck"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/logbuf"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/proto/admin"
)

// TestResumeSkipReplicated: a table in suspend mode stops at each poison
// record; `resume --skip` through the node's admin endpoint proposes a
// replicated ResumeTable; the table goes on past exactly that record, and
// in the end holds every other offset exactly once, with the skips counted
// and cleared from the replicated state once committed past.
func TestResumeSkipReplicated(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	const parts, total = 3, 300
	poison := map[int]bool{50: true, 151: true, 250: true} // partitions 2, 1, 1
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(parts, "poison")})
	var vals []string
	for i := range total {
		if poison[i] {
			vals = append(vals, fmt.Sprintf(`{"broken": %d`, i))
		} else {
			vals = append(vals, fmt.Sprintf(`{"i":%d}`, i))
		}
	}
	testnode.Produce(t, cl, "poison", vals, parts)
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "poison", Namespace: "res", Name: "poison", ErrorMode: "suspend"}})
	ctx := context.Background()
	logs := &logbuf.Buffer{} // plainResume counts the suspensions in it
	n, err := testnode.Start(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil)), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()

	skipped := map[string]bool{}
	for range poison {
		tr := waitTable(t, n, "res.poison", "SUSPENDED at a new record", time.Minute, func(tr status.TableReport) bool {
			return tr.State == "SUSPENDED" && tr.SuspendedAt != nil &&
				!skipped[fmt.Sprintf("%d/%d", tr.SuspendedAt.Partition, tr.SuspendedAt.Offset)]
		})
		at := tr.SuspendedAt
		if want := int64(at.Offset*parts) + int64(at.Partition); !poison[int(want)] {
			t.Fatalf("suspended at %s/%d offset %d, not a poison record", at.Topic, at.Partition, at.Offset)
		}
		skipped[fmt.Sprintf("%d/%d", at.Partition, at.Offset)] = true
		if !strings.Contains(tr.Reason, "skip it with `floe ctl tables resume res.poison --skip`") {
			t.Fatalf("the reason does not say how to skip the record: %s", tr.Reason)
		}
		if len(skipped) == 1 {
			plainResume(t, n, "res.poison", at, logs)
		}
		if _, err := admin.ResumeTable(ctx, cfg.Node.AdminAddr, "res.poison", true); err != nil {
			t.Fatal(err)
		}
	}
	tr := waitTable(t, n, "res.poison", "every good record", 2*time.Minute, func(tr status.TableReport) bool {
		return tr.Rows == total-int64(len(poison))
	})
	if tr.State != "RUNNING" || tr.Skipped != int64(len(poison)) || tr.DeadLetterRows != 0 {
		t.Fatalf("after the resumes: %+v", tr)
	}
	// A resume with skip of a table not suspended anywhere is refused.
	if _, err := admin.ResumeTable(ctx, cfg.Node.AdminAddr, "res.poison", true); err == nil {
		t.Fatal("resume --skip of a running table accepted")
	}

	tbl, err := n.Catalog().LoadTable(ctx, []string{"res", "poison"})
	if err != nil {
		t.Fatal(err)
	}
	counts, _, err := offsetcheck.Counts(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	for i := range total {
		p, o := i%parts, int64(i/parts)
		want := 1
		if poison[i] {
			want = 0
		}
		if got := counts[fmt.Sprintf("poison/%d", p)][o]; got != want {
			t.Fatalf("poison/%d offset %d appears %d times, want %d", p, o, got, want)
		}
	}
	key := ledger.TableKey([]string{"res", "poison"})
	wait.Until(t, 30*time.Second, "the replicated resume state", func() error {
		var gen uint64
		var skips int
		n.Raft().FSM().Read(func(s *fsm.State) {
			if r := s.Resumes[key]; r != nil {
				gen, skips = r.Gen, len(r.Skips)
			}
		})
		if gen != uint64(len(poison))+1 || skips != 0 { // +1: the plain resume
			return fmt.Errorf("gen %d, %d skips left", gen, skips)
		}
		return nil
	})
}

// plainResume resumes a table suspended at a bad record without skip: the
// answer says it will stop at the record again and how to skip it, and it
// does stop there again (a second "table suspended" line for the record in
// logs, then the status at it, which the resume had cleared).
func plainResume(t *testing.T, n *node.Node, table string, at *status.SuspendedRecord, logs *logbuf.Buffer) {
	t.Helper()
	record := fmt.Sprintf("bad record at %s/%d offset %d:", at.Topic, at.Partition, at.Offset)
	suspensions := func() int {
		c := 0
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, `msg="table suspended"`) && strings.Contains(l, record) {
				c++
			}
		}
		return c
	}
	before := suspensions()
	res, err := n.ResumeTable(context.Background(), table, false)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("it is suspended at a bad record (%s/%d offset %d) and will stop at it again: `floe ctl tables resume %s --skip` skips it",
		at.Topic, at.Partition, at.Offset, table)
	if !strings.Contains(res.Message, want) {
		t.Fatalf("plain resume answers %q, want it to say %q", res.Message, want)
	}
	wait.Until(t, time.Minute, "the table suspended again at the record", func() error {
		if c := suspensions(); c <= before {
			return fmt.Errorf("%d suspensions at %s logged, %d before the resume", c, record, before)
		}
		return nil
	})
	waitTable(t, n, table, "SUSPENDED again at the same record", time.Minute, func(tr status.TableReport) bool {
		return tr.State == "SUSPENDED" && tr.SuspendedAt != nil && tr.SuspendedAt.Partition == at.Partition && tr.SuspendedAt.Offset == at.Offset
	})
}
