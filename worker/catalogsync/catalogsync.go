package catalogsync

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/internal/retry"
)

// Catalog mirrors tables one way to one external catalog (AWS Glue,
// an Iceberg REST catalog). Sync must be idempotent: after a crash or a
// committer move the same location may be synced again.
type Catalog interface {
	// Name identifies the catalog in status and in the replicated record
	// of what was last synced.
	Name() string
	// Sync makes the catalog's entry for t point at t.MetadataLocation,
	// creating it (and its database or namespace) when missing, and
	// overwriting whatever anyone else changed in it.
	Sync(ctx context.Context, t sink.SyncTable) error
}

// FormatCatalog is a Catalog that mirrors only the tables written in one
// table format (Glue's Delta entries: format "delta"); a plain Catalog
// mirrors the Iceberg tables: every table but a [delta] one, which is
// published only as Delta.
type FormatCatalog interface {
	Catalog
	Format() string
}

// Dropper is a Catalog that can forget a table it mirrored, leaving its
// files alone: when a table stops being published in the catalog's format
// ([iceberg, delta] turned [delta]), its loop drops the entry it made.
type Dropper interface {
	Catalog
	// Drop removes the table's entry if it is the one Sync made for t
	// (pointing into t's metadata), and nothing else; a missing entry is
	// no error.
	Drop(ctx context.Context, t sink.SyncTable) error
}

// Iceberg is the table format a plain Catalog mirrors.
const Iceberg = "iceberg"

// Dropped is the location recorded (CatalogSynced) once a table's entry
// was dropped from a catalog: no metadata location is this string, so a
// table published again is synced again, and a drop done is not redone.
const Dropped = "(dropped)"

// mirrors reports whether c mirrors table t. A table whose formats are not
// known (no mapping routes into it now, or not yet: a node before its
// first topic discovery) is mirrored by a plain catalog as it was last:
// kept in sync if the record says it was synced, else left alone. So a
// mapping deleted keeps its table's entry, and a [delta] table is not
// published as Iceberg by a node that does not know its formats yet.
func mirrors(c Catalog, t Table) bool {
	if fc, ok := c.(FormatCatalog); ok {
		return slices.Contains(t.Formats, fc.Format())
	}
	if t.Formats == nil {
		loc := t.Synced[c.Name()].MetadataLocation
		return loc != "" && loc != Dropped
	}
	return slices.Contains(t.Formats, Iceberg)
}

// drops reports whether c should drop the entry it made for t: the table
// is no longer published in c's format, and the replicated record says c
// holds an entry for it.
func drops(c Catalog, t Table) bool {
	_, ok := c.(Dropper)
	loc := t.Synced[c.Name()].MetadataLocation
	return ok && !mirrors(c, t) && loc != "" && loc != Dropped
}

// target is what the loop brings c to for t: its metadata location, or
// Dropped when the table is no longer published in c's format.
func target(c Catalog, t Table) string {
	if mirrors(c, t) {
		return t.MetadataLocation
	}
	return Dropped
}

// Table is one table of the replicated state as catalog sync sees it.
type Table struct {
	Key                      string
	Ident                    []string
	MetadataLocation         string
	PreviousMetadataLocation string
	// Formats are the table formats its committer writes ("iceberg",
	// "delta"); a FormatCatalog mirrors only the tables of its format.
	Formats []string
	// Synced is the replicated record of the last sync, per catalog name.
	Synced map[string]SyncedAt
}

// SyncedAt is one replicated sync record.
type SyncedAt struct {
	MetadataLocation string
	At               time.Time
}

// State is the replicated state catalog sync reads.
type State interface {
	// Tables returns every table that has a metadata location.
	Tables() []Table
	// Table returns one of them; each sync loop reads only its own table
	// on every change to it.
	Table(key string) (Table, bool)
	Committer(table string) (ledger.Assignment, bool)
	// Watch returns a channel closed at the next state change: Run follows
	// the committer roles of every table.
	Watch() <-chan struct{}
	// WatchFormats returns a channel closed when the tables' Formats may
	// have changed (they come from the mappings, not from the tables):
	// Run then starts, ends or switches the loops of the tables concerned.
	WatchFormats() <-chan struct{}
	// WatchTable returns a channel closed at the next state change that
	// may concern table key (its pointer, sync records, committer): a
	// table's loop sleeps through changes to other tables.
	WatchTable(key string) <-chan struct{}
}

// Recorder records a successful sync in the replicated state, fenced by
// the committer role the sync ran under (cluster command CatalogSynced).
type Recorder interface {
	CatalogSynced(ctx context.Context, table, catalog, location string, committer ledger.Assignment, at time.Time) error
}

// Config configures catalog sync.
type Config struct {
	NodeID string
	// Interval is the least time between two syncs of one table to one
	// catalog: the commits in between coalesce into one update.
	Interval time.Duration
	// Timeout bounds one sync.
	Timeout time.Duration
}

// Status is this node's view of one table's sync to one catalog.
type Status struct {
	Catalog          string
	MetadataLocation string    // last synced by this node
	LastSync         time.Time // last success on this node
	// BehindSince is when this node first saw the table ahead of the
	// catalog; zero when the catalog is current.
	BehindSince time.Time
	LastError   string
	LastErrorAt time.Time
	Syncs       int64
	Failures    int64
}

// Sync mirrors every table this node commits to every configured
// catalog. It runs beside the commit loops, never in them: a slow or
// unreachable catalog delays only its own mirror, never a commit. One
// goroutine per table and catalog waits for the table's metadata pointer to
// move past the replicated sync record, waits out the interval (so bursts
// of commits become one update), syncs the newest pointer and records it.
// Because only the committer syncs, and it always syncs the current
// pointer, a catalog never moves backwards, and a new committer resumes
// from the replicated record.
type Sync struct {
	cfg     Config
	state   State
	rec     Recorder
	syncers []Catalog
	log     *slog.Logger

	mu     sync.Mutex
	status map[string]map[string]*Status // table key -> catalog -> status

	down outages // catalogs whose syncs fail (outage.go)
}

// New returns catalog sync over syncers; Run starts it.
func New(cfg Config, state State, rec Recorder, syncers []Catalog, log *slog.Logger) *Sync {
	if cfg.Interval <= 0 {
		cfg.Interval = 5 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	return &Sync{cfg: cfg, state: state, rec: rec, syncers: syncers, log: log, status: map[string]map[string]*Status{}}
}

// Run supervises the per-table loops until ctx ends.
func (s *Sync) Run(ctx context.Context) {
	if len(s.syncers) == 0 {
		return
	}
	// A table's loop for one catalog either mirrors it or drops its entry
	// (the table no longer published in the catalog's format). A change of
	// mode, which a mapping change makes without touching the table, ends
	// the old loop and starts the other once the old one has returned, so
	// a sync in flight never re-creates an entry after its drop.
	type loopKey struct{ table, catalog string }
	type running struct {
		cancel context.CancelFunc
		drop   bool
		done   chan struct{}
	}
	loops := map[loopKey]running{}
	var wg sync.WaitGroup
	defer func() {
		for _, l := range loops {
			l.cancel()
		}
		wg.Wait()
	}()
	for {
		changed, formats := s.state.Watch(), s.state.WatchFormats()
		want := map[loopKey]bool{} // the mode wanted: drop or mirror
		for _, t := range s.state.Tables() {
			if a, ok := s.committerOf(t.Key); ok && a.Node == s.cfg.NodeID {
				for _, c := range s.syncers {
					if m, d := mirrors(c, t), drops(c, t); m || d {
						want[loopKey{t.Key, c.Name()}] = d
					}
				}
			}
		}
		prev := map[loopKey]chan struct{}{}
		for k, l := range loops {
			if drop, ok := want[k]; !ok || drop != l.drop {
				l.cancel() // the role moved, the table went or its mode changed
				prev[k] = l.done
				delete(loops, k)
			}
		}
		for _, c := range s.syncers {
			for k, drop := range want {
				if _, ok := loops[k]; ok || k.catalog != c.Name() {
					continue
				}
				lctx, cancel := context.WithCancel(ctx)
				l := running{cancel: cancel, drop: drop, done: make(chan struct{})}
				loops[k] = l
				wg.Add(1)
				go func(table string, c Catalog, after <-chan struct{}) {
					defer wg.Done()
					defer close(l.done)
					if after != nil {
						<-after
					}
					s.loop(lctx, table, c, drop)
				}(k.table, c, prev[k])
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-formats:
		}
	}
}

// committerOf returns a table's committer; a dead-letter table is synced
// by its table's committer, as the FSM's fencing of CatalogSynced expects.
func (s *Sync) committerOf(key string) (ledger.Assignment, bool) {
	if a, ok := s.state.Committer(key); ok {
		return a, true
	}
	if base, ok := strings.CutSuffix(key, "_dlq"); ok {
		return s.state.Committer(base)
	}
	return ledger.Assignment{}, false
}

// watch returns the channels closed at the next change to what a table's
// loop reads: the table and, for a dead-letter table, the table whose
// committer syncs it (nil otherwise: never ready).
func (s *Sync) watch(key string) (own, base <-chan struct{}) {
	own = s.state.WatchTable(key)
	if b, ok := strings.CutSuffix(key, "_dlq"); ok {
		base = s.state.WatchTable(b)
	}
	return own, base
}

// loop keeps one table mirrored to one catalog while this node commits it.
func (s *Sync) loop(ctx context.Context, key string, c Catalog, drop bool) {
	log := s.log.With("table", ledger.DisplayName(key), "catalog", c.Name())
	defer s.down.left(c.Name(), key)
	b := retry.New()
	var (
		lastTry time.Time
		retryAt time.Time       // after a failure: not before this
		healed  <-chan struct{} // closed when the catalog answers again
	)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		changed, baseChanged := s.watch(key)
		a, mine := s.committerOf(key)
		t, ok := s.state.Table(key)
		if !ok || !mine || a.Node != s.cfg.NodeID || drop != drops(c, t) || (!drop && !mirrors(c, t)) {
			return
		}
		synced := t.Synced[c.Name()]
		wait := time.Duration(-1)
		if target(c, t) == synced.MetadataLocation {
			s.update(key, c.Name(), func(st *Status) { st.BehindSince = time.Time{} })
		} else {
			s.update(key, c.Name(), func(st *Status) {
				if st.BehindSince.IsZero() {
					st.BehindSince = time.Now()
				}
			})
			next := lastTry.Add(s.cfg.Interval)
			if retryAt.After(next) {
				next = retryAt
			}
			if wait = time.Until(next); wait <= 0 {
				lastTry = time.Now()
				if err := s.syncOnce(ctx, t, synced, c, a); err != nil {
					if ctx.Err() != nil {
						return
					}
					if errors.Is(err, ledger.ErrStaleCommitter) {
						log.Info("committer role moved; leaving the sync to the new committer", "err", err)
						return
					}
					var d time.Duration
					d, healed = s.failed(key, c.Name(), b, err)
					retryAt = time.Now().Add(d)
					log.Warn("catalog sync failed, retrying", "retry_in", d, "err", err)
				} else {
					b.Reset()
					retryAt, healed = time.Time{}, nil
					s.down.succeeded(c.Name())
				}
				continue // re-read: more commits may have come meanwhile
			}
		}
		if wait > 0 {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-baseChanged:
		case <-timer.C:
		case <-healed: // another loop reached the catalog: try at once
			b.Reset()
			retryAt, healed = time.Time{}, nil
		}
		if wait > 0 && !timer.Stop() {
			select { // drain a fired timer so Reset starts clean
			case <-timer.C:
			default:
			}
		}
	}
}

// failed records a failed sync of table key to c and returns how long the
// loop waits before the next try (its backoff, or probeEvery for the loop
// that probes a catalog that is down) and the channel closed when c
// answers again.
func (s *Sync) failed(key, catalog string, b *retry.Backoff, err error) (time.Duration, <-chan struct{}) {
	probe, healed := s.down.failed(catalog, key)
	d := b.Next()
	if probe {
		d = min(d, probeEvery)
	}
	s.update(key, catalog, func(st *Status) {
		st.LastError, st.LastErrorAt = err.Error(), time.Now()
		st.Failures++
	})
	return d, healed
}

// syncOnce mirrors the table's current pointer, or drops the entry of a
// table no longer published in c's format, and records it.
func (s *Sync) syncOnce(ctx context.Context, t Table, synced SyncedAt, c Catalog, a ledger.Assignment) error {
	prev := synced.MetadataLocation
	if prev == "" || prev == Dropped {
		prev = t.PreviousMetadataLocation
	}
	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	st := sink.SyncTable{Key: t.Key, Ident: t.Ident, MetadataLocation: t.MetadataLocation, PreviousMetadataLocation: prev}
	loc, err := target(c, t), error(nil)
	if d, ok := c.(Dropper); ok && loc == Dropped {
		// The entry points at the location last synced: Drop checks it
		// is the one this sync made.
		st.MetadataLocation = synced.MetadataLocation
		err = d.Drop(sctx, st)
	} else {
		err = c.Sync(sctx, st)
	}
	cancel()
	if err != nil {
		return err
	}
	// The catalog is current now; recording it lets the next committer
	// skip this location. If recording fails the location is synced
	// (or dropped) again, which Sync and Drop tolerate.
	if err := s.rec.CatalogSynced(ctx, t.Key, c.Name(), loc, a, time.Now()); err != nil {
		return errors.Join(errors.New("recording the sync"), err)
	}
	s.log.Debug("synced table to catalog", "table", ledger.DisplayName(t.Key), "catalog", c.Name(), "metadata", loc, "took", time.Since(start))
	s.update(t.Key, c.Name(), func(st *Status) {
		st.MetadataLocation, st.LastSync = loc, time.Now()
		st.LastError, st.LastErrorAt = "", time.Time{}
		st.Syncs++
	})
	return nil
}

func (s *Sync) update(table, catalog string, fn func(*Status)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.status[table]
	if m == nil {
		m = map[string]*Status{}
		s.status[table] = m
	}
	st := m[catalog]
	if st == nil {
		st = &Status{Catalog: catalog}
		m[catalog] = st
	}
	fn(st)
}

// Status returns this node's sync status per table key and catalog.
func (s *Sync) Status() map[string]map[string]Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]map[string]Status, len(s.status))
	for t, m := range s.status {
		out[t] = make(map[string]Status, len(m))
		for c, st := range m {
			out[t][c] = *st
		}
	}
	return out
}

// Mirroring returns the names of the configured catalogs that mirror a
// table written in formats (a FormatCatalog only its format's tables).
func (s *Sync) Mirroring(formats []string) []string {
	var out []string
	for _, c := range s.syncers {
		if mirrors(c, Table{Formats: formats}) {
			out = append(out, c.Name())
		}
	}
	return out
}

// Catalogs returns the names of the configured catalogs.
func (s *Sync) Catalogs() []string {
	out := make([]string, len(s.syncers))
	for i, c := range s.syncers {
		out[i] = c.Name()
	}
	return out
}
