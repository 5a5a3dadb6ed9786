package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/ledger"
)

// MinOrphanAge is the smallest safety age orphan cleanup accepts outside
// tests: a file younger than this may belong to a flush or commit in flight.
const MinOrphanAge = time.Hour

// CleanOrphans deletes files under a table's location (the table and its
// dead-letter table) that no retained snapshot or metadata file references,
// that keep does not name (the ledger's recorded, uncommitted files), and
// that are older than minAge. It returns how many files and bytes it
// deleted. Typical orphans: files of a writer that crashed before recording
// them, metadata files of commits that lost a race. committer is the role
// the cleanup runs as: it deletes files but commits nothing, so no catalog
// commit carries it; it is logged with each deletion. The deletion itself
// is not fenced yet (no barrier and re-check of the role just before it): a
// committer cut off past minAge could delete what its successor recorded.
func (s *Sink) CleanOrphans(ctx context.Context, key string, minAge time.Duration, keep map[string]bool, committer ledger.Assignment) (int, int64, error) {
	var (
		files int
		bytes int64
	)
	log := s.log.With("committer", committer.Node, "epoch", committer.Epoch)
	for _, ident := range [][]string{ledger.TableIdent(key), DLQIdent(ledger.TableIdent(key))} {
		tbl, err := s.cat.LoadTable(ctx, ident)
		if errors.Is(err, catalog.ErrNoSuchTable) {
			continue
		}
		if err != nil {
			return files, bytes, fmt.Errorf("cleaning orphans of %s: %w", ledger.DisplayName(ledger.TableKey(ident)), err)
		}
		n, b, err := s.cleanTable(ctx, tbl, minAge, keep, log)
		files, bytes = files+n, bytes+b
		if err != nil {
			return files, bytes, fmt.Errorf("cleaning orphans of %s: %w", ledger.DisplayName(ledger.TableKey(ident)), err)
		}
	}
	return files, bytes, nil
}

func stripScheme(p string) string {
	if i := strings.Index(p, "://"); i >= 0 {
		return p[i+3:]
	}
	return p
}

func (s *Sink) cleanTable(ctx context.Context, tbl *table.Table, minAge time.Duration, keep map[string]bool, log *slog.Logger) (int, int64, error) {
	plan, err := tbl.PlanOrphanFiles(ctx, table.WithFilesOlderThan(minAge))
	if err != nil {
		return 0, 0, err
	}
	sizes := map[string]int64{}
	for _, f := range plan.OrphanFiles() {
		sizes[f.Path] = f.SizeBytes
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return 0, 0, err
	}
	// The plan may spell paths differently from the ledger (file:///x vs
	// /x): compare without scheme, and by file name too, since every data
	// file name carries its write's unique id.
	kept := map[string]bool{}
	for p := range keep {
		kept[stripScheme(p)] = true
		kept[path.Base(p)] = true
	}
	var (
		mu      sync.Mutex
		deleted int
		bytes   int64
	)
	_, err = tbl.ExecuteOrphanCleanup(ctx, plan, table.WithDeleteFunc(func(p string) error {
		if kept[stripScheme(p)] || kept[path.Base(p)] {
			return nil // recorded in the ledger, committed soon
		}
		path := p
		if err := fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		mu.Lock()
		deleted++
		bytes += sizes[path]
		mu.Unlock()
		log.Info("deleted orphan file", "path", path)
		return nil
	}))
	return deleted, bytes, err
}
