package floebench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/proto/metrics"
)

// raftReading is what one node's /metrics says of Raft: the leader
// changes it saw since it started, and the sum and count of its
// proposal-to-apply histogram. Issue 38 asks that commit and compaction
// bursts never cost a leader change; the bench counts them.
type raftReading struct {
	ok            bool
	leaderChanges float64
	applySum      float64 // seconds
	applyCount    float64
}

// parseRaftMetrics reads a raftReading from a Prometheus text exposition.
func parseRaftMetrics(body []byte) raftReading {
	var r raftReading
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		switch name {
		case metrics.RaftLeaderChanges:
			r.leaderChanges, r.ok = v, true
		case metrics.RaftApplyDuration + "_sum":
			r.applySum = v
		case metrics.RaftApplyDuration + "_count":
			r.applyCount = v
		}
	}
	return r
}

// readRaft reads every node's Raft figures; a node that does not answer
// reads as not ok.
func (tb *tablesBench) readRaft(ctx context.Context) []raftReading {
	out := make([]raftReading, len(tb.cb.procs))
	for i, p := range tb.cb.procs {
		if body, _, err := timedGet(ctx, "http://"+p.admin+"/metrics"); err == nil {
			out[i] = parseRaftMetrics(body)
		}
	}
	return out
}

// raftDelta is the window's leader changes (the most any node saw: each
// node sees every change it lives through) and the mean proposal-to-apply
// time over every node's proposals.
func raftDelta(first, last []raftReading) (changes float64, meanApplyMS float64, ok bool) {
	var sum, count float64
	for i := range min(len(first), len(last)) {
		a, b := first[i], last[i]
		if !a.ok || !b.ok {
			continue
		}
		ok = true
		changes = max(changes, b.leaderChanges-a.leaderChanges)
		sum += b.applySum - a.applySum
		count += b.applyCount - a.applyCount
	}
	if count > 0 {
		meanApplyMS = 1000 * sum / count
	}
	return changes, meanApplyMS, ok
}

// reportRaft prints the leader changes over the whole run and the steady
// window, the mean apply time, and how the members share the partitions
// and the committers.
func (tb *tablesBench) reportRaft(out io.Writer, w *tablesWindow, rep status.Report) {
	whole, _, okWhole := raftDelta(w.atStart, w.last.raft)
	changes, applyMS, ok := raftDelta(w.first.raft, w.last.raft)
	if ok {
		fmt.Fprintf(out, "Raft: %.0f leader change(s) in the steady window, %.0f since every table committed (the first election excluded); proposal to apply %.1f ms mean over the window\n",
			changes, whole, applyMS)
	}
	if !okWhole && !ok {
		fmt.Fprintln(out, "Raft: no node's /metrics answered")
	}
	members := append([]status.MemberReport(nil), rep.Members...)
	sort.Slice(members, func(i, j int) bool { return members[i].ID < members[j].ID })
	var cells []string
	for _, m := range members {
		cells = append(cells, fmt.Sprintf("%s %d partitions, %d committers", m.ID, m.Partitions, m.Committers))
	}
	if len(cells) > 0 {
		fmt.Fprintf(out, "spread at the end: %s\n", strings.Join(cells, "; "))
	}
}
