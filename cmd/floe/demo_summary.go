package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/offsetcheck"
	"github.com/floe-io/floe/internal/status"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
)

// demoSummary prints the node's status, the table read back with the
// exactly-once check, the commands to query it from Python, and last the
// table queried: what a newcomer wants to see is the data.
func demoSummary(ctx context.Context, out io.Writer, n *node.Node, produced, bad int64) error {
	rep, err := n.Report(ctx)
	if err != nil {
		return err
	}
	if err := status.WriteText(out, rep); err != nil {
		return err
	}
	fmt.Fprintln(out)
	ident := []string{"demo", "orders"}
	tbl, err := n.Catalog().LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	counts, rows, err := offsetcheck.Counts(ctx, tbl)
	if err != nil {
		return err
	}
	dlqTbl, err := n.Catalog().LoadTable(ctx, icebergsink.DLQIdent(ident))
	var dlqRows int64
	if err == nil {
		if _, dlqRows, err = offsetcheck.Counts(ctx, dlqTbl); err != nil {
			return err
		}
	}
	dups := 0
	for _, offs := range counts {
		for _, c := range offs {
			if c > 1 {
				dups++
			}
		}
	}
	writeReadBack(ctx, out, tbl, rows, dlqRows, produced, bad, dups)
	if rows+dlqRows != produced || dups > 0 {
		return fmt.Errorf("exactly-once check failed: %d rows + %d dead letters for %d produced, %d duplicates", rows, dlqRows, produced, dups)
	}
	fmt.Fprintf(out, "  exactly once          every produced offset is in demo.orders or demo.orders_dlq, once\n\n")
	writeQueryCommands(out, tbl) // demo_query.go
	return writeOrdersQuery(ctx, out, tbl)
}

// writeReadBack prints what iceberg-go's scanner found in the table.
func writeReadBack(ctx context.Context, out io.Writer, tbl *table.Table, rows, dlqRows, produced, bad int64, dups int) {
	offsets, _ := icebergsink.Offsets(tbl.CurrentSnapshot())
	keys := make([]string, 0, len(offsets))
	for k := range offsets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var offs []string
	for _, k := range keys {
		offs = append(offs, fmt.Sprintf("%s=%d", k, offsets[k]))
	}
	var files int
	if tasks, err := tbl.Scan().PlanFiles(ctx); err == nil {
		files = len(tasks)
	}
	fmt.Fprintf(out, "Table demo.orders, read back with iceberg-go's scanner:\n")
	fmt.Fprintf(out, "  rows                  %d (+ %d in demo.orders_dlq) of %d produced (%d malformed)\n", rows, dlqRows, produced, bad)
	fmt.Fprintf(out, "  duplicate offsets     %d\n", dups)
	fmt.Fprintf(out, "  data files            %d\n", files)
	fmt.Fprintf(out, "  snapshots             %d\n", len(tbl.Metadata().Snapshots()))
	fmt.Fprintf(out, "  columns               %s\n", columnNames(tbl))
	fmt.Fprintf(out, "  committed offsets     %s (floe.offsets in the current snapshot summary)\n", strings.Join(offs, " "))
	fmt.Fprintf(out, "  metadata              %s\n", tbl.MetadataLocation())
}

func columnNames(tbl *table.Table) string {
	var names []string
	for _, f := range tbl.Schema().Fields() {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// dirExists reports whether path is a directory.
func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// deltaRoot is the table's root directory when it is a Delta table too.
func deltaRoot(tbl *table.Table) (string, bool) {
	root := strings.TrimPrefix(tbl.Location(), "file://")
	return root, dirExists(filepath.Join(root, "_delta_log"))
}
