package node

import (
	"errors"
	"log/slog"
	"time"
)

// Option is a start-up choice of New that is not configuration: the
// configuration file and environment describe the service, options
// describe how this process runs it (franz-go's pattern: an unexported cfg,
// its defaults, one-line documented options, and a validate step).
type Option func(*options)

type options struct {
	log            *slog.Logger
	version        string
	noSync         bool
	recover        bool
	expireInterval time.Duration
	orphanInterval time.Duration
	configWarnings []string
}

func defaultOptions() options {
	return options{log: slog.New(slog.DiscardHandler), version: "dev"}
}

// validate refuses options that New cannot run with; it names the option.
func (o options) validate() error {
	switch {
	case o.log == nil:
		return errors.New("node: WithLogger: the logger is nil")
	case o.version == "":
		return errors.New("node: WithVersion: the version is empty")
	case o.expireInterval < 0:
		return errors.New("node: WithMaintenanceIntervals: the expiry interval is negative")
	case o.orphanInterval < 0:
		return errors.New("node: WithMaintenanceIntervals: the orphan cleanup interval is negative")
	}
	return nil
}

// WithLogger sets the node's logger; the default discards everything.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithVersion sets the version the node registers, reports and compares with
// its peers before operator commands; the default is "dev".
func WithVersion(v string) Option { return func(o *options) { o.version = v } }

// WithNoSync skips fsync of the Raft log, for tests and benches only; the
// default syncs.
func WithNoSync() Option { return func(o *options) { o.noSync = true } }

// WithRecover restores the state from the warehouse backup when the group
// is new and empty (floe serve --recover); the default refuses to start a new
// group over a backup that holds tables.
func WithRecover(recover bool) Option { return func(o *options) { o.recover = recover } }

// WithMaintenanceIntervals sets how often committers expire snapshots and
// clean orphans, so tests need not wait; 0, the default, keeps the worker's
// defaults (1 minute and 1 hour).
func WithMaintenanceIntervals(expire, orphan time.Duration) Option {
	return func(o *options) { o.expireInterval, o.orphanInterval = expire, orphan }
}

// WithConfigWarnings hands the node what is wrong with its configuration
// but does not stop it (config.EnvWarnings: a FLOE_ variable that sets
// nothing): the node shows them as its "config" problem in the status for
// as long as it runs, since a misspelt variable leaves a node on defaults
// that otherwise looks healthy. The default is none.
func WithConfigWarnings(warnings []string) Option {
	return func(o *options) { o.configWarnings = warnings }
}
