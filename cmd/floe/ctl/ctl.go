package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

const exitCodesHelp = `Exit codes:
  0  ok
  1  other failure
  2  usage error: bad flags or arguments
  3  node unreachable (connection failed, deadline exceeded)
  4  node not ready (health)
  5  authentication or authorization refused (check --token)
  6  not found (no such mapping, table or member)
  7  refused by the server: invalid argument, already exists or failed precondition`

// Command returns the "ctl" command: a client of a node's gRPC admin API.
func Command() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "ctl",
		Short: "Manage a Floe cluster through its admin API",
		Long: `Manage a Floe cluster through a node's gRPC admin API: members and leadership,
topic mappings, tables (pause, resume, rewind, snapshots, maintenance) and health.

Any node answers: reads come from its replicated state, writes are forwarded to the
Raft leader and print the Raft index they committed at ("ok (raft index N)"), or
"unchanged" when the state already was as asked.

The connection is plaintext (h2c) unless --tls or one of --ca-file, --cert-file,
--key-file, --server-name is given. The token (--token, --token-file or FLOE_TOKEN) is
sent as "authorization: Bearer <token>"; over plaintext it can be read on the network,
so use plaintext only on trusted networks.

Output is text tables by default; -o json prints the API's messages as JSON (proto field
names, every field present).

` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	o.register(cmd.PersistentFlags(), 30*time.Second)
	groupRun(cmd)
	cmd.AddCommand(
		membersCmd(o), leaderCmd(o), nodeCmd(o),
		mappingsCmd(o), tablesCmd(o), healthCmd(o),
		completionCmd(),
	)
	finish(cmd)
	o.addCompletions(cmd)
	return cmd
}

// finish makes every command of the tree return errors instead of printing them
// (main prints "floe: <error>") and turn flag errors into usage errors.
func finish(cmd *cobra.Command) {
	cmd.SilenceErrors = true
	cmd.SilenceUsage = true
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErrorf("%w (see %s --help)", err, c.CommandPath())
	})
	for _, c := range cmd.Commands() {
		finish(c)
	}
}

// groupRun makes a command that only groups subcommands print its help, and reject
// unknown subcommands with a usage error.
func groupRun(cmd *cobra.Command) {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageErrorf("unknown command %q for %q (see %s --help)", args[0], c.CommandPath(), c.CommandPath())
		}
		return c.Help()
	}
}

// exactArgs and rangeArgs are cobra's argument checks returning usage errors.
func exactArgs(n int, names ...string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			if n == 0 {
				return usageErrorf("%s takes no arguments, got %q", c.CommandPath(), args)
			}
			return usageErrorf("%s needs %d argument(s) (%v), got %d", c.CommandPath(), n, names, len(args))
		}
		return nil
	}
}

func maxArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) > n {
			return usageErrorf("%s takes at most %d argument(s), got %d", c.CommandPath(), n, len(args))
		}
		return nil
	}
}

// env is what an action runs with: a connected client, a context with the command's
// deadline and the output.
type env struct {
	*client
	ctx  context.Context
	out  io.Writer
	json bool
}

// action wraps a command's body: it resolves the flags, connects, applies --timeout
// and turns gRPC errors into ExitErrors with the server's message.
func (o *options) action(fn func(e *env, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.resolve(cmd.Flags()); err != nil {
			return err
		}
		c, err := o.dial()
		if err != nil {
			return err
		}
		defer c.conn.Close()
		ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
		defer cancel()
		e := &env{client: c, ctx: ctx, out: cmd.OutOrStdout(), json: o.output == "json"}
		return rpcError(o.addr, fn(e, args))
	}
}

// printJSON prints a message as indented JSON with proto field names and every field.
func printJSON(w io.Writer, m proto.Message) error {
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

// show prints an answer to a read: as JSON with --json, else as text. It
// passes a failed call's error on.
func (e *env) show(m proto.Message, err error, text func() error) error {
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.out, m)
	}
	return text()
}

// write prints a write's answer, and passes a failed call's error on.
func (e *env) write(r *adminv1.WriteResponse, err error) error {
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.out, r)
	}
	if r.GetUnchanged() {
		fmt.Fprintln(e.out, "unchanged")
	} else {
		fmt.Fprintf(e.out, "ok (raft index %d)\n", r.GetRaftIndex())
	}
	if r.GetMessage() != "" {
		fmt.Fprintln(e.out, r.GetMessage())
	}
	return nil
}

func newTab(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// dur renders seconds for people, like floe status.
func dur(sec float64) string {
	return (time.Duration(sec*1000) * time.Millisecond).Round(100 * time.Millisecond).String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// ago renders a timestamp as the time since it, "never" when unset.
func ago(ts *timestamppb.Timestamp) string {
	if ts == nil || (ts.GetSeconds() == 0 && ts.GetNanos() == 0) {
		return "never"
	}
	return dur(time.Since(ts.AsTime()).Seconds()) + " ago"
}

func stamp(ts *timestamppb.Timestamp) string {
	if ts == nil || (ts.GetSeconds() == 0 && ts.GetNanos() == 0) {
		return "-"
	}
	return ts.AsTime().UTC().Format(time.RFC3339)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
