package floebench

import (
	"context"
	"log/slog"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
)

// newNode builds a node the way floe serve does, logging to log.
func newNode(ctx context.Context, cfg config.Config, log *slog.Logger, opts ...node.Option) (*node.Node, error) {
	return node.New(ctx, cfg, append([]node.Option{node.WithLogger(log)}, opts...)...)
}
