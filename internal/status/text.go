package status

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText renders the report as tables for people (floe demo prints it).
func WriteText(w io.Writer, r Report) error {
	writeHeader(w, r)
	writeMembers(w, r.Members)
	if err := writeTables(w, r.Tables); err != nil {
		return err
	}
	for _, t := range r.Tables {
		if t.Reason != "" {
			fmt.Fprintf(w, "\n%s: %s\n", t.Table, t.Reason)
		}
	}
	for _, t := range r.Tables {
		writeDelta(w, t)
	}
	for _, t := range r.Tables {
		if err := writeCatalogs(w, t); err != nil {
			return err
		}
	}
	for _, t := range r.Tables {
		if err := writePartitions(w, t); err != nil {
			return err
		}
	}
	return nil
}

// writeHeader writes the node, its backup and its problems, sorted.
func writeHeader(w io.Writer, r Report) {
	state := r.RaftState
	if r.State != "" {
		state += ", " + r.State
	}
	fmt.Fprintf(w, "node %s (%s), leader %s\n", r.Node, state, r.Leader)
	if r.Backup != nil {
		fmt.Fprintf(w, "state backup: %s ago (%s)\n", dur(r.Backup.AgeSec), r.Backup.Location)
	}
	if m := r.Memory; m != nil {
		fmt.Fprintf(w, "memory budget: %.1f of %.1f MiB held", float64(m.HeldBytes)/(1<<20), float64(m.LimitBytes)/(1<<20))
		if m.BudgetBytes > 0 {
			fmt.Fprintf(w, " (the records' share of the %.1f MiB memory_budget)", float64(m.BudgetBytes)/(1<<20))
		}
		fmt.Fprintln(w)
	}
	writeBrokers(w, r)
	keys := make([]string, 0, len(r.Problems))
	for k := range r.Problems {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "problem: %s: %s\n", k, r.Problems[k])
	}
	fmt.Fprintln(w)
}

// writeBrokers writes one line per Kafka broker this node's readers talk
// to: up (and when it last answered) or down (since when, why).
func writeBrokers(w io.Writer, r Report) {
	for _, b := range r.Brokers {
		if b.Up {
			ago := "never answered"
			if !b.LastResponse.IsZero() {
				ago = "answered " + dur(max(0, r.GeneratedAt.Sub(b.LastResponse).Seconds())) + " ago"
			}
			fmt.Fprintf(w, "kafka broker %s: up, %s, leads %d partitions read here\n", b.Addr, ago, b.Partitions)
			continue
		}
		fmt.Fprintf(w, "kafka broker %s: DOWN for %s, %d partitions read here wait on it: %s\n",
			b.Addr, dur(max(0, r.GeneratedAt.Sub(b.Since).Seconds())), b.Partitions, b.Reason)
	}
}

func writeMembers(w io.Writer, members []MemberReport) {
	if len(members) == 0 {
		return
	}
	mw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(mw, "MEMBER\tROLE\tZONE\tVERSION\tHEALTHY\tPARTITIONS\tCOMMITS")
	for _, m := range members {
		health := "yes"
		switch {
		case !m.Healthy:
			health = fmt.Sprintf("no (%s)", dur(m.Unreachable))
		case m.UpgradeRequired:
			health = "upgrade required"
		case m.StorageFailing:
			health = "raft log unwritable"
		case m.ClockSkewed:
			health = fmt.Sprintf("clock off by %+.0fs", m.ClockOffset)
		case m.Draining:
			health = "draining"
		}
		fmt.Fprintf(mw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\n", m.ID, m.Role, m.Zone, m.Version, health, m.Partitions, m.Committers)
	}
	mw.Flush()
	fmt.Fprintln(w)
}

// writeTables writes one summary line per table.
func writeTables(w io.Writer, tables []TableReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tSTATE\tROWS\tFILES\tSNAPSHOTS\tDLQ\tLAST COMMIT\tFRESHNESS\tLAG")
	for _, t := range tables {
		var lag int64
		for _, p := range t.Partitions {
			lag += p.Lag
		}
		last := "never"
		if !t.LastCommit.IsZero() {
			last = fmt.Sprintf("%s ago", dur(t.LastCommitAgeSec))
		}
		fresh := "-"
		if t.FreshnessSec > 0 {
			fresh = dur(t.FreshnessSec)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d\n", t.Table, t.State, t.Rows, t.DataFiles, t.Snapshots, t.DeadLetterRows, last, fresh, lag)
	}
	return tw.Flush()
}

// writeDelta writes a table's Delta log line, if it has one.
func writeDelta(w io.Writer, t TableReport) {
	if t.Delta == nil {
		return
	}
	fmt.Fprintf(w, "\n%s formats: %s; delta version %d (commit sequence %d)", t.Table, strings.Join(t.Formats, ", "), t.Delta.Version, t.Delta.Sequence)
	if v := t.DeadLetterDeltaVersion; v != nil {
		fmt.Fprintf(w, "; dead letters' delta version %d", *v)
	}
	fmt.Fprintln(w)
}

// writeCatalogs writes a table's external catalogs, if it has any.
func writeCatalogs(w io.Writer, t TableReport) error {
	if len(t.Catalogs) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s catalogs\n", t.Table)
	cw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(cw, "  CATALOG\tIN SYNC\tLAG\tLAST SYNC\tERROR")
	for _, c := range t.Catalogs {
		last := "never"
		if !c.LastSync.IsZero() {
			last = c.LastSync.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(cw, "  %s\t%v\t%s\t%s\t%s\n", c.Catalog, c.InSync, dur(c.LagSec), last, c.LastError)
	}
	return cw.Flush()
}

func writePartitions(w io.Writer, t TableReport) error {
	fmt.Fprintf(w, "\n%s partitions\n", t.Table)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  PARTITION\tCOMMITTED\tRECORDED\tHIGH WATERMARK\tLAG\tNODE\tEPOCH\tERROR")
	for _, p := range t.Partitions {
		node := p.Node
		if p.Held != "" {
			node += " (held: " + p.Held + ")" // assigned there, not read
		}
		fmt.Fprintf(tw, "  %s/%d\t%d\t%d\t%d\t%d\t%s\t%d\t%s\n", p.Topic, p.Partition, p.Committed, p.Recorded, p.HighWatermark, p.Lag, node, p.Epoch, strings.TrimSpace(p.LastError))
	}
	return tw.Flush()
}

func dur(sec float64) string {
	return (time.Duration(sec*1000) * time.Millisecond).Round(100 * time.Millisecond).String()
}
