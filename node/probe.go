package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"gocloud.dev/gcerrors"

	"github.com/floe-io/floe/config"
)

// probeTimeout bounds the start-up write; a store that does not answer in
// it is reported and retried later like any outage, not a reason to stop.
const probeTimeout = 15 * time.Second

// probeWarehouse writes and deletes a small object under the warehouse
// (<location>/_floe/probe/<node>), so a location Floe may not write (a
// wrong bucket, a missing permission, a read-only directory) stops the
// start naming warehouse.location, instead of showing up as a DEGRADED
// table at the first commit. A failure that may pass (a timeout, a
// network error) is returned as a warning: the node starts and its writes
// retry with backoff.
func probeWarehouse(ctx context.Context, w config.Warehouse, nodeID string) (warning, err error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	loc := strings.TrimSuffix(w.Location, "/") + "/_floe/probe/" + nodeID
	e := writeProbe(ctx, w, loc)
	switch {
	case e == nil:
		return nil, nil
	case terminalStorageError(e):
		return nil, &ConfigError{Err: fmt.Errorf("warehouse.location %s: Floe cannot write there: %w", w.Location, e)}
	default:
		return fmt.Errorf("warehouse.location %s: the start-up write did not succeed (retried with every write): %w", w.Location, e), nil
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

// terminalStorageError reports whether a storage error will not pass by
// itself: permissions, a missing bucket, a read-only file system.
func terminalStorageError(err error) bool {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) ||
		errors.Is(err, syscall.ENOTDIR) {
		return true
	}
	switch gcerrors.Code(err) {
	case gcerrors.PermissionDenied, gcerrors.NotFound, gcerrors.InvalidArgument:
		return true
	}
	return false
}
