package ctl

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

func membersCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "members",
		Short: "List the Raft group's members with role, zone, version and health",
		Args:  exactArgs(0),
		RunE: o.action(func(e *env, _ []string) error {
			r, err := e.cluster.ListMembers(e.ctx, &adminv1.ListMembersRequest{})
			return e.show(r, err, func() error { return writeMembers(e.out, r.GetMembers()) })
		}),
	}
}

func writeMembers(w io.Writer, members []*adminv1.Member) error {
	tw := newTab(w)
	fmt.Fprintln(tw, "MEMBER\tROLE\tZONE\tVERSION\tHEALTHY\tDRAINING\tPARTITIONS\tCOMMITTERS")
	for _, m := range members {
		health := "yes"
		if !m.GetHealthy() {
			health = "no"
			if m.GetUnreachableSeconds() > 0 {
				health = fmt.Sprintf("no (%s)", dur(m.GetUnreachableSeconds()))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\n", m.GetId(), m.GetRole(), dash(m.GetZone()), dash(m.GetVersion()),
			health, yesNo(m.GetDraining()), m.GetPartitions(), m.GetCommitters())
	}
	return tw.Flush()
}

func leaderCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "leader",
		Short: "Show the Raft leader",
		Args:  exactArgs(0),
		RunE: o.action(func(e *env, _ []string) error {
			r, err := e.cluster.GetLeader(e.ctx, &adminv1.GetLeaderRequest{})
			return e.show(r, err, func() error {
				if r.GetId() == "" {
					fmt.Fprintln(e.out, "no leader")
					return nil
				}
				fmt.Fprintf(e.out, "leader %s", r.GetId())
				if r.GetAdminAddr() != "" {
					fmt.Fprintf(e.out, " (admin %s)", r.GetAdminAddr())
				}
				if r.GetSince() != nil {
					fmt.Fprintf(e.out, ", since %s", stamp(r.GetSince()))
				}
				fmt.Fprintln(e.out)
				return nil
			})
		}),
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "transfer [ID]",
		Short: "Hand leadership to another voter (any up-to-date voter without ID)",
		Args:  maxArgs(1),
		RunE: o.action(func(e *env, args []string) error {
			req := &adminv1.TransferLeadershipRequest{}
			if len(args) == 1 {
				req.Id = args[0]
			}
			return e.write(e.cluster.TransferLeadership(e.ctx, req))
		}),
	})
	return cmd
}

func nodeCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "node", Short: "Drain, undrain or remove a member of the Raft group"}
	groupRun(cmd)
	cmd.AddCommand(&cobra.Command{
		Use:   "drain ID",
		Short: "Mark a member draining: it takes no new work and its partitions and committer roles move away",
		Args:  exactArgs(1, "ID"),
		RunE: o.action(func(e *env, args []string) error {
			return e.write(e.cluster.DrainNode(e.ctx, &adminv1.DrainNodeRequest{Id: args[0]}))
		}),
	}, &cobra.Command{
		Use:   "undrain ID",
		Short: "Clear an operator's draining mark: the member takes work again",
		Args:  exactArgs(1, "ID"),
		RunE: o.action(func(e *env, args []string) error {
			return e.write(e.cluster.UndrainNode(e.ctx, &adminv1.UndrainNodeRequest{Id: args[0]}))
		}),
	}, &cobra.Command{
		Use:   "remove ID",
		Short: "Remove a member from the Raft group (for a node that is gone for good)",
		Args:  exactArgs(1, "ID"),
		RunE: o.action(func(e *env, args []string) error {
			return e.write(e.cluster.RemoveNode(e.ctx, &adminv1.RemoveNodeRequest{Id: args[0]}))
		}),
	})
	return cmd
}

func healthCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "health",
		Short: "Check that the node is live and ready (exit code 4 when not ready)",
		Args:  exactArgs(0),
		RunE: o.action(func(e *env, _ []string) error {
			r, err := e.health.Check(e.ctx, &adminv1.HealthCheckRequest{})
			if err != nil {
				return err
			}
			if e.json {
				if err := printJSON(e.out, r); err != nil {
					return err
				}
			} else if r.GetReady() {
				fmt.Fprintf(e.out, "ready (node %s, leader %s)\n", dash(r.GetNode()), dash(r.GetLeader()))
			}
			if !r.GetReady() {
				reason := r.GetReason()
				if reason == "" {
					reason = "no reason given"
				}
				if !r.GetLive() {
					reason = "not live: " + reason
				}
				return &ExitError{Code: ExitNotReady, Err: fmt.Errorf("node %s not ready: %s", dash(r.GetNode()), reason)}
			}
			return nil
		}),
	}
}
