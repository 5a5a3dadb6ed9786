package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// usageErrors makes every usage error of floe's own commands (own, under
// root) end with exitUsage, as README's exit-code table says: a flag that
// does not exist or does not parse (floe serve --confg), an argument a
// command does not take (floe serve floe.yaml), an unknown command (floe
// srve, floe tls foo). Cobra returns these as plain errors, which would
// exit 1. ctl's commands do the same themselves (ctl.ExitUsage).
func usageErrors(root *cobra.Command, own []*cobra.Command) {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usage(c, err) })
	groupArgs(root)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		switch {
		case c.HasSubCommands() && !c.Runnable():
			groupArgs(c)
		case c.Args == nil:
			c.Args = func(c *cobra.Command, args []string) error {
				if len(args) > 0 {
					return usage(c, fmt.Errorf("%s takes no arguments, got %q", c.CommandPath(), args))
				}
				return nil
			}
		default:
			check := c.Args
			c.Args = func(c *cobra.Command, args []string) error { return usage(c, check(c, args)) }
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	for _, c := range own {
		walk(c)
	}
}

// serveArgs refuses arguments to floe serve, where the likely one is the
// configuration file without its flag.
func serveArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("floe serve takes no arguments, got %q: give the configuration file as --config %s", args, args[0])
	}
	return nil
}

// groupArgs makes a command that only groups others print its help, and
// refuse an unknown subcommand naming the closest ones.
func groupArgs(c *cobra.Command) {
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if c.SuggestionsMinimumDistance <= 0 {
			c.SuggestionsMinimumDistance = 2 // cobra's default, set only on its own path
		}
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return usage(c, errors.New(msg))
	}
}

// usage is err as a usage error (nil for nil; an error that already has
// its code keeps it).
func usage(c *cobra.Command, err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
}
