package ctl

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

func completionCmd() *cobra.Command {
	return &cobra.Command{
		Use:       "completion bash|zsh|fish|powershell",
		Short:     "Print a shell completion script for floe",
		Long:      "Print a shell completion script for the whole floe command tree to stdout, e.g.\n  source <(floe ctl completion bash)",
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("%s needs one argument: bash, zsh, fish or powershell", c.CommandPath())
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			root, out := c.Root(), c.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(out)
			}
			return usageErrorf("unknown shell %q: use bash, zsh, fish or powershell", args[0])
		},
	}
}

// remoteNames completes a command's first argument with names the node lists (tables,
// mappings, members); errors complete nothing.
func (o *options) remoteNames(list func(e *env) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if o.resolve(cmd.Flags()) != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := o.dial()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer c.conn.Close()
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		ctx, cancel := context.WithTimeout(ctx, min(o.timeout, 5*time.Second))
		defer cancel()
		names, err := list(&env{client: c, ctx: ctx})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

func tableNames(e *env) ([]string, error) {
	r, err := e.tables.ListTables(e.ctx, &adminv1.ListTablesRequest{})
	return namesOf(r.GetTables(), (*adminv1.TableStatus).GetTable), err
}

func mappingNames(e *env) ([]string, error) {
	r, err := e.tables.ListMappings(e.ctx, &adminv1.ListMappingsRequest{})
	return namesOf(r.GetMappings(), (*adminv1.Mapping).GetName), err
}

func memberIDs(e *env) ([]string, error) {
	r, err := e.cluster.ListMembers(e.ctx, &adminv1.ListMembersRequest{})
	return namesOf(r.GetMembers(), (*adminv1.Member).GetId), err
}

// namesOf returns the name of each of xs, for completion.
func namesOf[T any](xs []T, name func(T) string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, name(x))
	}
	return out
}

// addCompletions registers the argument and flag completions of the ctl tree.
func (o *options) addCompletions(root *cobra.Command) {
	fixed := func(c *cobra.Command, flag string, values ...string) {
		if c.Flags().Lookup(flag) != nil || c.PersistentFlags().Lookup(flag) != nil {
			_ = c.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
		}
	}
	fixed(root, "output", "text", "json")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasParent() {
			switch c.Parent().Name() + " " + c.Name() {
			case "tables get", "tables pause", "tables resume", "tables rewind", "tables snapshots", "tables maintain":
				c.ValidArgsFunction = o.remoteNames(tableNames)
			case "mappings get", "mappings update", "mappings delete":
				c.ValidArgsFunction = o.remoteNames(mappingNames)
			case "node drain", "node undrain", "node remove", "leader transfer":
				c.ValidArgsFunction = o.remoteNames(memberIDs)
			}
		}
		fixed(c, "policy", "append", "replace")
		fixed(c, "format", "json", "raw", "avro", "protobuf", "json_schema", "latest")
		fixed(c, "error-mode", "log", "skip", "suspend")
		fixed(c, "tombstones", "ignore", "dlq")
		fixed(c, "start-offset", "earliest", "latest")
		// config.StorageClasses; ctl imports only the API.
		fixed(c, "storage-class", "STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING", "GLACIER_IR", "EXPRESS_ONEZONE")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
