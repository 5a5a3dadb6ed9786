package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
)

// The tests build nodes through the same builder as serve, demo and the
// benches (newNode in main.go, then node.New); these helpers keep their old
// names so the tests read as before the builder moved to package node.

type floeNode = node.Node

// nodeOptions are start-up choices that are not configuration.
type nodeOptions struct {
	NoSync  bool // no fsync of the Raft log
	Recover bool // restore the state from the warehouse backup (floe serve --recover)
}

// Maintenance cadence; 0 keeps the worker's defaults, tests shorten them.
var (
	expireInterval time.Duration
	orphanInterval time.Duration
)

func startNode(ctx context.Context, cfg config.Config, log *slog.Logger, noSync bool) (*floeNode, error) {
	return startNodeWith(ctx, cfg, log, nodeOptions{NoSync: noSync})
}

func startNodeWith(ctx context.Context, cfg config.Config, log *slog.Logger, opts nodeOptions) (*floeNode, error) {
	o := []node.Option{node.WithRecover(opts.Recover), node.WithMaintenanceIntervals(expireInterval, orphanInterval)}
	if opts.NoSync {
		o = append(o, node.WithNoSync())
	}
	return newNode(ctx, cfg, log, o...)
}
