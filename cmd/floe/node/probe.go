package node

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/floe-io/floe/internal/config"
)

// probeTimeout bounds one start-up write.
const probeTimeout = 15 * time.Second

// probeWarehouse writes and deletes a small object under the warehouse
// (<location>/_floe/probe/<node>), so a location Floe cannot write (a wrong
// bucket, a missing permission, a file where a directory should be) is said
// at start, naming warehouse.location, instead of showing up as a DEGRADED
// table at the first commit. It does not stop the start: the obstacle may
// be removed while the node runs (retryProbe clears the problem then), as
// with any unreachable dependency.
func probeWarehouse(ctx context.Context, w config.Warehouse, nodeID string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	loc := strings.TrimSuffix(w.Location, "/") + "/_floe/probe/" + nodeID
	if err := writeProbe(ctx, w, loc); err != nil {
		return fmt.Errorf("warehouse.location %s: Floe cannot write there: %w", w.Location, err)
	}
	return nil
}

// retryProbe repeats a failed start-up probe with backoff (1s doubling to
// 1m) and clears the node's "warehouse" problem once a write succeeds.
func (n *Node) retryProbe(ctx context.Context) {
	for wait := time.Second; ; wait = min(2*wait, time.Minute) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		err := probeWarehouse(ctx, n.cfg.Warehouse, n.cfg.Node.ID)
		if err == nil {
			n.worker.Status().SetGlobal("warehouse", "")
			n.log.Info("warehouse writable again", "location", n.cfg.Warehouse.Location)
			return
		}
		n.worker.Status().SetGlobal("warehouse", err.Error())
	}
}

func writeProbe(ctx context.Context, w config.Warehouse, loc string) error {
	fsys, err := icebergio.LoadFS(ctx, IOProps(w), loc)
	if err != nil {
		return fmt.Errorf("opening storage: %w", err)
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return fmt.Errorf("writing %s: %w", loc, fs.ErrPermission)
	}
	if err := wfs.WriteFile(loc, []byte("floe start-up probe\n")); err != nil {
		return fmt.Errorf("writing %s: %w", loc, err)
	}
	if err := fsys.Remove(loc); err != nil {
		return fmt.Errorf("deleting %s: %w", loc, err)
	}
	return nil
}
