package floebench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
	sinkapi "github.com/floe-io/floe/sinks/sink"
)

// runHealthBench measures what table health costs and buys:
//   - commit latency after 10 and after `snapshots` commits of history, with
//     the default expiry (500 snapshots) running as the committer runs it;
//   - compaction throughput (input MB/s of a bin-pack rewrite);
//   - data files after an hour of 1-second commits (3,600 flushes of one
//     small file each, simulated back to back), with and without compaction
//     every simulated minute under the hot-table policy.
func runHealthBench(ctx context.Context, out io.Writer, snapshots, hourSeconds int) error {
	// Synced like a production node: commit latency includes the fsync.
	n, sink, done, err := rawSinkNode(ctx, "floe-bench-health", "health")
	if err != nil {
		return err
	}
	defer done()
	if err := benchCommitLatency(ctx, out, n, sink, snapshots); err != nil {
		return err
	}
	// An hour of 1-second commits, without and with compaction.
	for _, compact := range []bool{false, true} {
		if err := benchHour(ctx, out, n, sink, hourSeconds, compact); err != nil {
			return err
		}
	}
	return nil
}

// benchCommitter gives the bench table key the committer role on n, as the
// assignment controller gives a mapped table's: the sink's maintenance
// commits are fenced by it.
func benchCommitter(ctx context.Context, n *node.Node, key string) (ledger.Assignment, error) {
	a := ledger.Assignment{Node: n.ID(), Epoch: 1}
	if _, err := n.Raft().Apply(ctx, fsm.Assign{Committers: []fsm.CommitterAssignment{{Table: key, Assignment: a}}}); err != nil {
		return a, fmt.Errorf("assigning the committer of %s: %w", ledger.DisplayName(key), err)
	}
	return a, nil
}

// benchCommitLatency measures commit latency against history length.
func benchCommitLatency(ctx context.Context, out io.Writer, n *node.Node, sink *icebergsink.Sink, snapshots int) error {
	cat := n.Catalog()
	spec := sinkapi.TableSpec{Key: ledger.TableKey([]string{"bench", "latency"}), Ident: []string{"bench", "latency"}, Format: "raw"}
	if err := sink.Prepare(ctx, spec, nil); err != nil {
		return err
	}
	committer, err := benchCommitter(ctx, n, spec.Key)
	if err != nil {
		return err
	}
	var lat []time.Duration
	for i := range snapshots {
		tbl, err := cat.LoadTable(ctx, spec.Ident)
		if err != nil {
			return err
		}
		start := time.Now()
		tx := tbl.NewTransaction()
		if err := tx.AddFiles(ctx, nil, iceberg.Properties{icebergsink.PropOffsets: fmt.Sprintf(`{"t/0":%d}`, i+1)}, false); err != nil {
			return err
		}
		if _, err := tx.Commit(ctx); err != nil {
			return err
		}
		lat = append(lat, time.Since(start))
		if i%60 == 59 { // the committer expires once a minute; at 1 commit/s
			if _, err := sink.Expire(ctx, spec.Key, 7*24*time.Hour, 500, time.Now(), committer); err != nil {
				return err
			}
		}
	}
	p50 := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	at := func(n int) time.Duration { return p50(lat[max(0, n-10):n]) }
	early, late := at(10), at(len(lat))
	fmt.Fprintf(out, "commit latency, p50 of the 10 commits before each point (expiry keeps 500 snapshots):\n")
	for _, n := range []int{10, 100, 500, 1000, 5000, 10000} {
		if n <= len(lat) {
			fmt.Fprintf(out, "  after %6d commits: %s\n", n, at(n).Round(10*time.Microsecond))
		}
	}
	fmt.Fprintf(out, "ratio after %d / after 10: %.2f", len(lat), float64(late)/float64(early))
	if len(lat) >= 1000 {
		fmt.Fprintf(out, "; after %d / after 1000 (history past the retention): %.2f", len(lat), float64(late)/float64(at(1000)))
	}
	fmt.Fprintln(out)
	return nil
}

// benchHour simulates an hour of 1-second commits back to back, with
// compaction every simulated minute under the hot-table policy if compact,
// and reports the data files left (and the compaction throughput).
func benchHour(ctx context.Context, out io.Writer, n *node.Node, sink *icebergsink.Sink, hourSeconds int, compact bool) error {
	cat := n.Catalog()
	name := "nocompact"
	if compact {
		name = "compact"
	}
	spec := sinkapi.TableSpec{Key: ledger.TableKey([]string{"bench", name}), Ident: []string{"bench", name}, Format: "raw"}
	if err := sink.Prepare(ctx, spec, nil); err != nil {
		return err
	}
	committer, err := benchCommitter(ctx, n, spec.Key)
	if err != nil {
		return err
	}
	var rewriteBytes int64
	var rewriteTime time.Duration
	for sec := range hourSeconds {
		if err := benchSecond(ctx, cat, sink, spec, sec); err != nil {
			return err
		}
		if sec%60 == 59 { // the committer expires once a minute (default: keep 500)
			if _, err := sink.Expire(ctx, spec.Key, 7*24*time.Hour, 500, time.Now(), committer); err != nil {
				return err
			}
		}
		if compact && sec%60 == 59 {
			start := time.Now()
			rw, err := sink.PlanRewrite(ctx, spec.Key, sinkapi.CompactionPolicy{TargetFileSize: 128 << 20, MinInputFiles: 5, HotMinInputFiles: 16, Hot: true, MaxBytes: 10 << 30})
			if err != nil {
				return err
			}
			if err := sink.CommitRewrite(ctx, spec.Key, rw, committer, time.Now()); err != nil {
				return err
			}
			rewriteTime += time.Since(start)
			rewriteBytes += rw.Stats().BytesBefore
		}
	}
	tbl, err := cat.LoadTable(ctx, spec.Ident)
	if err != nil {
		return err
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return err
	}
	if compact {
		fmt.Fprintf(out, "data files after an hour of 1-second commits, compaction every minute (hot policy): %d\n", len(tasks))
		fmt.Fprintf(out, "compaction throughput: %.1f MB/s of input (%.1f MB rewritten in %s)\n",
			float64(rewriteBytes)/1e6/rewriteTime.Seconds(), float64(rewriteBytes)/1e6, rewriteTime.Round(time.Millisecond))
	} else {
		fmt.Fprintf(out, "data files after an hour of 1-second commits, no compaction: %d\n", len(tasks))
	}
	return nil
}

// benchSecond writes one second's small file of 200 records and commits
// it, as one flush of a busy table does.
func benchSecond(ctx context.Context, cat *catalog.Catalog, sink *icebergsink.Sink, spec sinkapi.TableSpec, sec int) error {
	recs := make([]*records.Record, 200)
	for j := range recs {
		recs[j] = &records.Record{Topic: "t", Partition: int32(j % 4), Offset: int64(sec*200 + j), Raw: []byte(fmt.Sprintf(`{"sec":%d,"j":%d,"pad":"%0100d"}`, sec, j, j))}
	}
	files, err := sink.Write(ctx, spec, uuid.NewString(), recs)
	if err != nil {
		return err
	}
	tbl, err := cat.LoadTable(ctx, spec.Ident)
	if err != nil {
		return err
	}
	// iceberg-go reads each file's footer for its statistics, as a user
	// adding files they wrote would: the bench measures what the table
	// holds after an hour, not the cost of this step.
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	tx := tbl.NewTransaction()
	if err := tx.AddFiles(ctx, paths, nil, false); err != nil {
		return err
	}
	_, err = tx.Commit(ctx)
	return err
}
