//go:build long

package e2e

// The fleet's final check: every produced (partition, offset) read back
// exactly once from each table's metadata location, independently of Floe.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
)

// verify is the final check: wait until every table's committed offsets
// reach what was produced, then read each table from its metadata location
// with iceberg-go, without Floe's catalog, and require every (partition,
// offset) in [0, produced) exactly once.
func (f *fleet) verify(produced map[string]int64, timeout time.Duration) {
	f.t.Helper()
	start, lastLog := time.Now(), time.Now()
	var rep status.Report
	err := wait.Poll(timeout, func() error {
		f.checkCrashes()
		var err error
		if rep, _, err = f.status(); err != nil {
			return err
		}
		if behind := f.behind(rep, produced); behind != "" {
			if time.Since(lastLog) > 15*time.Second {
				lastLog = time.Now()
				f.event("catching up: %s", behind)
			}
			return errors.New(behind)
		}
		return nil
	})
	if err != nil {
		f.t.Fatalf("not caught up after %s: %v\nstatus: %s", timeout, err, reportSummary(rep))
	}
	f.event("caught up after %.1fs", time.Since(start).Seconds())
	var total int64
	var report []map[string]any
	for _, topic := range f.topics {
		tr, _ := tableReport(rep, tableOf(topic))
		ctx := context.Background()
		tbl, err := table.NewFromLocation(ctx, table.Identifier{fleetNamespace, topic}, tr.MetadataLocation,
			icebergio.LoadFSFunc(node.IOProps(f.wh), tr.MetadataLocation), nil)
		if err != nil {
			f.t.Fatalf("loading %s from %s: %v", tr.Table, tr.MetadataLocation, err)
		}
		per, ranges := map[int32]int64{}, map[string][2]int64{}
		for p := range int32(fleetPartitions) {
			tp := fmt.Sprintf("%s/%d", topic, p)
			per[p], ranges[tp] = produced[tp], [2]int64{0, produced[tp]}
			total += produced[tp]
		}
		testnode.CheckExactlyOnce(f.t, []*table.Table{tbl}, topic, per)
		offs, err := icebergsink.Offsets(tbl.CurrentSnapshot())
		if err != nil {
			f.t.Fatal(err)
		}
		for tp, r := range ranges {
			if offs[tp] != r[1] {
				f.t.Errorf("%s: snapshot floe.offsets[%s] = %d, produced %d", tr.Table, tp, offs[tp], r[1])
			}
		}
		if tr.DeadLetterRows != 0 {
			f.t.Errorf("%s: %d dead letters, want none", tr.Table, tr.DeadLetterRows)
		}
		f.checkDelta(tr, tbl, per) // cluster_delta_test.go
		entry := map[string]any{"table": tr.Table, "topic": topic, "metadata_location": tr.MetadataLocation,
			"expect": map[string]any{"table": tr.Table, "ranges": ranges, "key_field": "k", "header_key": "k", "append_delta_equals_records": true,
				"columns": []string{"_kafka_topic", "_kafka_partition", "_kafka_offset", "_kafka_timestamp", "_kafka_key", "_kafka_headers", "k", "n", "pad"}}}
		if tr.Delta != nil {
			entry["delta_sequence"] = tr.Delta.Sequence // the interop suite hands it to delta_check.py
		}
		report = append(report, entry)
	}
	f.event("exactly once: %d records over %d tables read back from their metadata locations", total, len(f.topics))
	if path := os.Getenv("FLOE_CHAOS_REPORT"); path != "" && !f.t.Failed() {
		f.extra["tables"], f.extra["warehouse"] = report, f.wh.Location
		data, _ := json.MarshalIndent(f.extra, "", " ")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
}

// behind says which partitions have not committed what was produced.
func (f *fleet) behind(rep status.Report, produced map[string]int64) string {
	var out []string
	for _, topic := range f.topics {
		tr, ok := tableReport(rep, tableOf(topic))
		if !ok {
			return "no table " + tableOf(topic)
		}
		got := map[string]int64{}
		for _, p := range tr.Partitions {
			got[fmt.Sprintf("%s/%d", p.Topic, p.Partition)] = p.Committed
		}
		for p := range fleetPartitions {
			tp := fmt.Sprintf("%s/%d", topic, p)
			if got[tp] != produced[tp] {
				out = append(out, fmt.Sprintf("%s=%d/%d", tp, got[tp], produced[tp]))
			}
		}
	}
	if len(out) > 6 {
		out = append(out[:6], fmt.Sprintf("(+%d more)", len(out)-6))
	}
	return strings.Join(out, " ")
}

// reportSummary renders a report compactly for failure messages.
func reportSummary(rep status.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "node %s (%s) leader %s problems %v\n", rep.Node, rep.RaftState, rep.Leader, rep.Problems)
	for _, m := range rep.Members {
		fmt.Fprintf(&b, "  member %s %s healthy=%v draining=%v partitions=%d committers=%d unreachable=%.1fs\n",
			m.ID, m.Role, m.Healthy, m.Draining, m.Partitions, m.Committers, m.Unreachable)
	}
	for _, tr := range rep.Tables {
		fmt.Fprintf(&b, "  %s %s %q rows=%d committer=%s pending=%d failures=%d\n", tr.Table, tr.State, tr.Reason, tr.Rows, tr.Committer, tr.PendingEntries, tr.CommitFailures)
		for _, p := range tr.Partitions {
			fmt.Fprintf(&b, "    %s/%d committed=%d recorded=%d hw=%d node=%s epoch=%d %s\n", p.Topic, p.Partition, p.Committed, p.Recorded, p.HighWatermark, p.Node, p.Epoch, p.LastError)
		}
	}
	return b.String()
}
