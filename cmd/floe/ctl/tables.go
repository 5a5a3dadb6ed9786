package ctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/timestamppb"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

func tablesCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "tables",
		Aliases: []string{"table"},
		Short:   "Show tables and pause, resume, rewind or maintain them",
	}
	groupRun(cmd)
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List every table's state and figures",
		Args:  exactArgs(0),
		RunE: o.action(func(e *env, _ []string) error {
			r, err := e.tables.ListTables(e.ctx, &adminv1.ListTablesRequest{})
			return e.show(r, err, func() error { return writeTables(e.out, r.GetTables()) })
		}),
	}, &cobra.Command{
		Use:   "get TABLE",
		Short: "Show one table's status with partitions, catalogs and last rewind",
		Args:  exactArgs(1, "TABLE"),
		RunE: o.action(func(e *env, args []string) error {
			t, err := e.tables.GetTable(e.ctx, &adminv1.GetTableRequest{Table: args[0]})
			return e.show(t, err, func() error { return writeTable(e.out, t) })
		}),
	}, &cobra.Command{
		Use:   "pause TABLE",
		Short: "Stop a table's ingestion on every node until resumed",
		Args:  exactArgs(1, "TABLE"),
		RunE: o.action(func(e *env, args []string) error {
			return e.write(e.tables.PauseTable(e.ctx, &adminv1.PauseTableRequest{Table: args[0]}))
		}),
	}, resumeCmd(o), rewindCmd(o), &cobra.Command{
		Use:   "snapshots TABLE",
		Short: "List a table's Iceberg snapshots, oldest first",
		Args:  exactArgs(1, "TABLE"),
		RunE: o.action(func(e *env, args []string) error {
			r, err := e.tables.ListSnapshots(e.ctx, &adminv1.ListSnapshotsRequest{Table: args[0]})
			return e.show(r, err, func() error { return writeSnapshots(e.out, r) })
		}),
	}, maintainCmd(o))
	return cmd
}

func maintainCmd(o *options) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "maintain TABLE",
		Short: "Run a table's snapshot expiry, orphan cleanup and compaction now",
		Long: "Run a table's snapshot expiry, orphan cleanup and compaction now, on its committer.\n" +
			"A table whose mapping sets compaction.enabled: false is refused unless --force.",
		Args: exactArgs(1, "TABLE"),
		RunE: o.action(func(e *env, args []string) error {
			r, err := e.tables.RunMaintenance(e.ctx, &adminv1.RunMaintenanceRequest{Table: args[0], Force: force})
			return e.show(r, err, func() error {
				fmt.Fprintf(e.out, "maintenance ran on node %s\n", dash(r.GetNode()))
				var buf bytes.Buffer
				if r.GetResultJson() != "" {
					if json.Indent(&buf, []byte(r.GetResultJson()), "", "  ") != nil {
						buf.Reset()
						buf.WriteString(r.GetResultJson())
					}
					buf.WriteByte('\n')
				}
				_, err = e.out.Write(buf.Bytes())
				return err
			})
		}),
	}
	cmd.Flags().BoolVar(&force, "force", false, "compact even a table whose mapping sets compaction.enabled: false")
	return cmd
}

func resumeCmd(o *options) *cobra.Command {
	var skip bool
	cmd := &cobra.Command{
		Use:   "resume TABLE",
		Short: "Resume a paused or suspended table",
		Long: "Resume a table paused by an operator or suspended at a bad record (error_mode: suspend),\n" +
			"on every node. A table suspended at a bad record decodes it again and stops at it again\n" +
			"unless --skip is given, which skips exactly that record (counted as skipped); the answer\n" +
			"says so. Fix what the record needed (the registry's schema, say) before a plain resume.",
		Args: exactArgs(1, "TABLE"),
		RunE: o.action(func(e *env, args []string) error {
			return e.write(e.tables.ResumeTable(e.ctx, &adminv1.ResumeTableRequest{Table: args[0], Skip: skip}))
		}),
	}
	cmd.Flags().BoolVar(&skip, "skip", false, "continue past the bad record a suspended table stopped at (without it, the table stops at that record again)")
	return cmd
}

// rewindFlags are the flags of floe ctl tables rewind.
type rewindFlags struct {
	earliest, latest bool
	timestamp        string
	offsets          []string
	policy           string
}

func rewindCmd(o *options) *cobra.Command {
	var f rewindFlags
	cmd := &cobra.Command{
		Use:   "rewind TABLE (--earliest | --latest | --timestamp T | --offset topic:partition:offset...) --policy append|replace",
		Short: "Move a table's consumer position and replay from there",
		Long: `Move a table's consumer position to the earliest or latest offsets Kafka holds, to the first
offsets at or after a time (--timestamp, RFC 3339), or to explicit offsets (--offset
topic:partition:offset, repeatable; partitions not named stay where they are).

--policy is required: append replays the records again, keeping the rows already in the
table (replayed offsets appear twice); replace deletes the table's rows at or after the new
position first, so each offset is again held once.`,
		Example: `  floe ctl tables rewind shop.orders --earliest --policy replace
  floe ctl tables rewind shop.orders --timestamp 2026-11-29T12:00:00Z --policy append
  floe ctl tables rewind shop.orders --offset orders:0:1500 --offset orders:1:1480 --policy replace`,
		Args: exactArgs(1, "TABLE"),
	}
	cmd.RunE = o.action(func(e *env, args []string) error {
		req, err := f.request(args[0], cmd.Flags().Changed("timestamp"))
		if err != nil {
			return err
		}
		r, err := e.tables.RewindTable(e.ctx, req)
		return e.show(r, err, func() error {
			fmt.Fprintf(e.out, "ok (raft index %d)\n", r.GetRaftIndex())
			if d := r.GetRewind().GetDescribe(); d != "" {
				fmt.Fprintln(e.out, d)
			}
			return nil
		})
	})
	fs := cmd.Flags()
	fs.BoolVar(&f.earliest, "earliest", false, "rewind to the oldest offsets Kafka still holds")
	fs.BoolVar(&f.latest, "latest", false, "move to the end of each partition (skips what was not consumed)")
	fs.StringVar(&f.timestamp, "timestamp", "", "rewind to the first offsets at or after this RFC 3339 time")
	fs.StringArrayVar(&f.offsets, "offset", nil, "explicit offset topic:partition:offset (repeatable)")
	fs.StringVar(&f.policy, "policy", "", "replay policy: append or replace (required)")
	return cmd
}

// request builds the RewindTableRequest of table the flags ask for, or a
// usage error; hasTimestamp says whether --timestamp was given.
func (f *rewindFlags) request(table string, hasTimestamp bool) (*adminv1.RewindTableRequest, error) {
	req := &adminv1.RewindTableRequest{Table: table}
	n := 0
	if f.earliest {
		n++
		req.Target = &adminv1.RewindTableRequest_Earliest{Earliest: true}
	}
	if f.latest {
		n++
		req.Target = &adminv1.RewindTableRequest_Latest{Latest: true}
	}
	if hasTimestamp {
		n++
		t, err := time.Parse(time.RFC3339Nano, f.timestamp)
		if err != nil {
			return nil, usageErrorf("--timestamp %q: want RFC 3339, e.g. 2026-11-29T12:00:00Z", f.timestamp)
		}
		req.Target = &adminv1.RewindTableRequest_Timestamp{Timestamp: timestamppb.New(t)}
	}
	if len(f.offsets) > 0 {
		n++
		ex := &adminv1.ExplicitOffsets{}
		for _, s := range f.offsets {
			po, err := parseOffset(s)
			if err != nil {
				return nil, err
			}
			ex.Offsets = append(ex.Offsets, po)
		}
		req.Target = &adminv1.RewindTableRequest_Offsets{Offsets: ex}
	}
	if n != 1 {
		return nil, usageErrorf("give exactly one of --earliest, --latest, --timestamp, --offset")
	}
	switch strings.ToLower(f.policy) {
	case "append":
		req.Policy = adminv1.ReplayPolicy_APPEND
	case "replace":
		req.Policy = adminv1.ReplayPolicy_REPLACE
	case "":
		return nil, usageErrorf("--policy is required: append (replay again, keep rows) or replace (delete rows from the new position)")
	default:
		return nil, usageErrorf("--policy %q: use append or replace", f.policy)
	}
	return req, nil
}

func parseOffset(s string) (*adminv1.PartitionOffset, error) {
	i := strings.LastIndex(s, ":")
	j := -1
	if i > 0 {
		j = strings.LastIndex(s[:i], ":")
	}
	if j <= 0 {
		return nil, usageErrorf("--offset %q: use topic:partition:offset", s)
	}
	part, err1 := strconv.ParseInt(s[j+1:i], 10, 32)
	off, err2 := strconv.ParseInt(s[i+1:], 10, 64)
	if err1 != nil || err2 != nil || part < 0 || off < 0 {
		return nil, usageErrorf("--offset %q: use topic:partition:offset with numbers", s)
	}
	return &adminv1.PartitionOffset{Topic: s[:j], Partition: int32(part), Offset: off}, nil
}

func tableLag(t *adminv1.TableStatus) int64 {
	var lag int64
	for _, p := range t.GetPartitions() {
		lag += p.GetLag()
	}
	return lag
}

func tableState(t *adminv1.TableStatus) string {
	if t.GetPaused() {
		return dash(t.GetState()) + " (paused)"
	}
	return dash(t.GetState())
}

func freshness(sec float64) string {
	if sec <= 0 {
		return "-"
	}
	return dur(sec)
}

// writeTables renders ListTables: one line a table, then the tables' reasons.
func writeTables(w io.Writer, tables []*adminv1.TableStatus) error {
	tw := newTab(w)
	fmt.Fprintln(tw, "TABLE\tSTATE\tROWS\tFILES\tDLQ\tFRESHNESS\tLAG\tLAST-COMMIT")
	for _, t := range tables {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%d\t%s\n", t.GetTable(), tableState(t), t.GetRows(), t.GetDataFiles(),
			t.GetDeadLetterRows(), freshness(t.GetFreshnessSeconds()), tableLag(t), ago(t.GetLastCommit()))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	first := true
	for _, t := range tables {
		if t.GetReason() == "" {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		fmt.Fprintf(w, "%s: %s\n", t.GetTable(), t.GetReason())
	}
	return nil
}

// writeTable renders one table's status.
func writeTable(w io.Writer, t *adminv1.TableStatus) error {
	tw := newTab(w)
	for _, kv := range [][2]string{
		{"table", t.GetTable()},
		{"state", tableState(t)},
		{"reason", t.GetReason()},
		{"rows", fmt.Sprint(t.GetRows())},
		{"data files", fmt.Sprint(t.GetDataFiles())},
		{"dead-letter rows", fmt.Sprint(t.GetDeadLetterRows())},
		{"snapshots", fmt.Sprint(t.GetSnapshots())},
		{"commits", fmt.Sprint(t.GetCommits())},
		{"last commit", ago(t.GetLastCommit())},
		{"freshness", freshness(t.GetFreshnessSeconds())},
		{"lag", fmt.Sprint(tableLag(t))},
		{"pending entries", fmt.Sprint(t.GetPendingEntries())},
		{"records consumed", fmt.Sprint(t.GetRecordsConsumed())},
		{"records dead-lettered", fmt.Sprint(t.GetRecordsDeadLettered())},
		{"records skipped", fmt.Sprint(t.GetRecordsSkipped())},
		{"commit failures", fmt.Sprint(t.GetCommitFailures())},
		{"committer", t.GetCommitter()},
		{"formats", strings.Join(t.GetFormats(), ", ")},
		{"delta", deltaString(t.GetDelta())},
		{"metadata", t.GetMetadataLocation()},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", kv[0], dash(kv[1]))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeTablePartitions(w, t.GetPartitions()); err != nil {
		return err
	}
	if err := writeTableCatalogs(w, t.GetCatalogs()); err != nil {
		return err
	}
	if rw := t.GetRewind(); rw != nil {
		return writeRewind(w, rw)
	}
	return nil
}

// deltaString shows a table's Delta log as its last recorded commit left
// it; empty (a dash) for a table without one.
func deltaString(d *adminv1.DeltaStatus) string {
	if d == nil {
		return ""
	}
	return fmt.Sprintf("version %d (commit sequence %d)", d.GetVersion(), d.GetSequence())
}

// writeTablePartitions renders a table's partitions, if it has any.
func writeTablePartitions(w io.Writer, parts []*adminv1.PartitionStatus) error {
	if len(parts) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\npartitions")
	tw := newTab(w)
	fmt.Fprintln(tw, "  PARTITION\tSTART\tCOMMITTED\tRECORDED\tHIGH-WATERMARK\tLAG\tLAG-TIME\tNODE\tEPOCH\tERROR")
	for _, p := range parts {
		fmt.Fprintf(tw, "  %s/%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%s\n", p.GetTopic(), p.GetPartition(), p.GetStart(),
			p.GetCommitted(), p.GetRecorded(), p.GetHighWatermark(), p.GetLag(), dur(p.GetLagSeconds()),
			dash(p.GetNode()), p.GetEpoch(), strings.TrimSpace(p.GetLastError()))
	}
	return tw.Flush()
}

// writeTableCatalogs renders a table's external catalogs, if it has any.
func writeTableCatalogs(w io.Writer, cats []*adminv1.CatalogStatus) error {
	if len(cats) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\ncatalogs")
	tw := newTab(w)
	fmt.Fprintln(tw, "  CATALOG\tIN-SYNC\tLAG\tLAST-SYNC\tFAILURES\tERROR")
	for _, c := range cats {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%s\n", c.GetCatalog(), yesNo(c.GetInSync()), dur(c.GetLagSeconds()),
			stamp(c.GetLastSync()), c.GetFailures(), c.GetLastError())
	}
	return tw.Flush()
}

// writeRewind renders a table's last rewind: how, and each partition's
// offsets before and after.
func writeRewind(w io.Writer, rw *adminv1.Rewind) error {
	fmt.Fprintf(w, "\nlast rewind: generation %d, %s", rw.GetGeneration(), rw.GetPolicy())
	if rw.GetAt() != nil {
		fmt.Fprintf(w, " at %s", stamp(rw.GetAt()))
	}
	if rw.GetPolicy() == adminv1.ReplayPolicy_REPLACE {
		if rw.GetReplaceDone() {
			fmt.Fprint(w, ", rows replaced")
		} else {
			fmt.Fprint(w, ", replacing rows")
		}
	}
	fmt.Fprintln(w)
	if rw.GetDescribe() != "" {
		fmt.Fprintln(w, rw.GetDescribe())
	}
	from := map[string]int64{}
	for _, p := range rw.GetFrom() {
		from[fmt.Sprintf("%s/%d", p.GetTopic(), p.GetPartition())] = p.GetOffset()
	}
	tw := newTab(w)
	fmt.Fprintln(tw, "  PARTITION\tFROM\tTO")
	for _, p := range rw.GetTo() {
		k := fmt.Sprintf("%s/%d", p.GetTopic(), p.GetPartition())
		f := "-"
		if v, ok := from[k]; ok {
			f = fmt.Sprint(v)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\n", k, f, p.GetOffset())
	}
	return tw.Flush()
}

func writeSnapshots(w io.Writer, r *adminv1.ListSnapshotsResponse) error {
	tw := newTab(w)
	fmt.Fprintln(tw, "SNAPSHOT\tPARENT\tSEQUENCE\tTIMESTAMP\tOPERATION\tADDED-ROWS\tTOTAL-ROWS")
	for _, s := range r.GetSnapshots() {
		id := fmt.Sprint(s.GetSnapshotId())
		if s.GetSnapshotId() == r.GetCurrentSnapshotId() {
			id += " (current)"
		}
		parent := "-"
		if s.GetParentSnapshotId() != 0 {
			parent = fmt.Sprint(s.GetParentSnapshotId())
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", id, parent, s.GetSequenceNumber(), stamp(s.GetTimestamp()),
			dash(s.GetOperation()), dash(s.GetSummary()["added-records"]), dash(s.GetSummary()["total-records"]))
	}
	return tw.Flush()
}
