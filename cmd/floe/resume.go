package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/floe-io/floe/admin"
)

// resumeCmd is `floe resume <namespace.table> [--skip]`: restart, on every
// node, a table suspended at a bad record (error_mode suspend), past it with
// --skip, or a topic paused at an incompatible schema once the table or the
// producer is fixed. Any node accepts it and replicates it (ResumeTable).
func resumeCmd() *cobra.Command {
	var (
		addr string
		skip bool
	)
	cmd := &cobra.Command{
		Use:   "resume <namespace.table>",
		Short: "Resume a suspended table (--skip: past the bad record) or a topic paused at an incompatible schema",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			out, err := admin.ResumeTable(ctx, addr, args[0], skip)
			if err != nil {
				return &exitError{code: exitFailure, err: err}
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&addr, "admin-addr", envOr("FLOE_NODE_ADMIN_ADDR", "127.0.0.1:7421"), "admin address of any node of the cluster")
	cmd.Flags().BoolVar(&skip, "skip", false, "consume the records the table is suspended at (on any node) as skipped")
	return cmd
}
