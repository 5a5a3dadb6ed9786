package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ledger"
)

// MinOrphanAge is the smallest safety age orphan cleanup accepts outside
// tests: a file younger than this may belong to a flush or commit in flight.
const MinOrphanAge = time.Hour

// orphanPlan is one table's orphan candidates, listed from tbl.
type orphanPlan struct {
	key  string
	name string
	tbl  *table.Table
	plan table.OrphanCleanupPlan
}

// CleanOrphans deletes files under a table's location (the table and its
// dead-letter table) that no retained snapshot or metadata file references,
// that keep does not name (the ledger's recorded, uncommitted files), and
// that are older than minAge. It returns how many files and bytes it
// deleted. Typical orphans: files of a writer that crashed before recording
// them, metadata files of commits that lost a race.
//
// The deletion is fenced by committer: after listing the candidates and
// before the first deletion, a read barrier proves this node's state
// current, the role is re-checked in it, and the candidates are re-checked
// against the now-current metadata and pending entries (the listing may be
// stale: the commit loop keeps committing meanwhile). When the barrier
// fails nothing is deleted and the error wraps ErrUnfenced; when the role
// moved, ledger.ErrStaleCommitter. So a committer cut off in a minority
// cannot delete files its successor committed.
func (s *Sink) CleanOrphans(ctx context.Context, key string, minAge time.Duration, keep map[string]bool, committer ledger.Assignment) (int, int64, error) {
	name := ledger.DisplayName(key)
	if err := s.caughtUp(ctx, key); err != nil {
		return 0, 0, fmt.Errorf("cleaning orphans of %s: %w", name, err)
	}
	var plans []orphanPlan
	candidates := 0
	for _, ident := range [][]string{ledger.TableIdent(key), DLQIdent(ledger.TableIdent(key))} {
		p, ok, err := s.planOrphans(ctx, ident, minAge)
		if err != nil {
			return 0, 0, fmt.Errorf("cleaning orphans of %s: %w", p.name, err)
		}
		if ok {
			plans = append(plans, p)
			candidates += len(p.plan.OrphanFiles())
		}
	}
	if candidates == 0 && (len(plans) == 0 || !s.follows(key)) {
		return 0, 0, nil // (a Delta log is cleaned up even then)
	}
	pending, err := s.fenceDeletion(ctx, key, committer)
	if err != nil {
		return 0, 0, fmt.Errorf("cleaning orphans of %s: %w", name, err)
	}
	// Files the Delta log references are not orphans while it does (the
	// log's own files are spared in cleanTable).
	for _, p := range plans {
		if s.follower == nil {
			break
		}
		referenced, err := s.follower.Referenced(ctx, s.followedTable(p.key, p.tbl, committer))
		if err != nil {
			return 0, 0, fmt.Errorf("cleaning orphans of %s: %w", name, err)
		}
		keep = mergeKeep(keep, referenced)
	}
	spared := sparedNames(keep, pending)
	if s.follows(key) {
		// Behind the same fence: the follower logs' own cleanup (their
		// entries past the table's retention, never data files), the
		// table's and its dead-letter table's.
		for _, p := range plans {
			if err := s.follower.CleanLog(ctx, key, s.followedTable(p.key, p.tbl, committer)); err != nil {
				return 0, 0, fmt.Errorf("cleaning orphans of %s: %w", p.name, err)
			}
		}
	}
	log := s.log.With("committer", committer.Node, "epoch", committer.Epoch)
	var (
		files int
		bytes int64
	)
	for _, p := range plans {
		n, b, err := s.cleanTable(ctx, p, minAge, spared, log)
		files, bytes = files+n, bytes+b
		if err != nil {
			return files, bytes, fmt.Errorf("cleaning orphans of %s: %w", p.name, err)
		}
	}
	return files, bytes, nil
}

// planOrphans lists a table's orphan candidates; ok is false when the table
// does not exist (yet).
func (s *Sink) planOrphans(ctx context.Context, ident []string, minAge time.Duration) (orphanPlan, bool, error) {
	p := orphanPlan{key: ledger.TableKey(ident), name: ledger.DisplayName(ledger.TableKey(ident))}
	tbl, err := s.cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return p, false, nil
	}
	if err != nil {
		return p, false, err
	}
	p.tbl = tbl
	p.plan, err = tbl.PlanOrphanFiles(ctx, table.WithFilesOlderThan(minAge))
	return p, err == nil, err
}

// sparedNames is every file keep and pending name. The plan may spell paths
// differently from the ledger (file:///x vs /x): it holds each without
// scheme, and its name too, since every data file name carries its write's
// unique id.
func sparedNames(keep, pending map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, m := range []map[string]bool{keep, pending} {
		for p := range m {
			out[stripScheme(p)] = true
			out[path.Base(p)] = true
		}
	}
	return out
}

// deltaLogDir holds a table's Delta log: never Iceberg's, never an orphan.
const deltaLogDir = "_delta_log"

// mergeKeep is keep with more names added.
func mergeKeep(keep, more map[string]bool) map[string]bool {
	if len(more) == 0 {
		return keep
	}
	out := maps.Clone(keep)
	if out == nil {
		out = map[string]bool{}
	}
	maps.Copy(out, more)
	return out
}

func stripScheme(p string) string {
	if i := strings.Index(p, "://"); i >= 0 {
		return p[i+3:]
	}
	return p
}

// stillOrphans re-checks a plan's candidates against the table's metadata
// as of now (after the fence): when the table moved on since the listing,
// only the candidates that a new listing of the current metadata also
// finds unreferenced remain.
func (s *Sink) stillOrphans(ctx context.Context, p orphanPlan, minAge time.Duration) (map[string]bool, error) {
	out := map[string]bool{}
	for _, f := range p.plan.OrphanFiles() {
		out[f.Path] = true
	}
	cur, err := s.cat.LoadTable(ctx, p.tbl.Identifier())
	if err != nil {
		return nil, err
	}
	if cur.MetadataLocation() == p.tbl.MetadataLocation() {
		return out, nil
	}
	again, err := cur.PlanOrphanFiles(ctx, table.WithFilesOlderThan(minAge))
	if err != nil {
		return nil, err
	}
	now := map[string]bool{}
	for _, f := range again.OrphanFiles() {
		now[f.Path] = true
	}
	for f := range out {
		if !now[f] {
			delete(out, f)
		}
	}
	return out, nil
}

func (s *Sink) cleanTable(ctx context.Context, p orphanPlan, minAge time.Duration, spared map[string]bool, log *slog.Logger) (int, int64, error) {
	orphans, err := s.stillOrphans(ctx, p, minAge)
	if err != nil {
		return 0, 0, err
	}
	sizes := map[string]int64{}
	for _, f := range p.plan.OrphanFiles() {
		sizes[f.Path] = f.SizeBytes
	}
	fsys, err := p.tbl.FS(ctx)
	if err != nil {
		return 0, 0, err
	}
	mod, ref, err := storeTimes(fsys, p.tbl.Location(), p.tbl.MetadataLocation()) // orphanclock.go
	if err != nil {
		return 0, 0, err
	}
	var (
		mu      sync.Mutex
		deleted int
		young   int
		bytes   int64
	)
	_, err = p.tbl.ExecuteOrphanCleanup(ctx, p.plan, table.WithDeleteFunc(func(file string) error {
		if !orphans[file] || spared[stripScheme(file)] || spared[path.Base(file)] || strings.Contains(file, "/"+deltaLogDir+"/") {
			return nil // referenced now, or recorded in the ledger and committed soon
		}
		if !oldByStore(mod, ref, file, minAge) {
			mu.Lock()
			young++ // old by this node's clock only
			mu.Unlock()
			return nil
		}
		if err := fsys.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		mu.Lock()
		deleted++
		bytes += sizes[file]
		mu.Unlock()
		log.Info("deleted orphan file", "path", file)
		return nil
	}))
	if young > 0 {
		log.Info("kept orphan candidates written less than the safety age before the table's last commit (the object store's clock); they go after a later commit",
			"table", p.name, "files", young, "last_commit", ref, "min_age", minAge)
	}
	return deleted, bytes, err
}
