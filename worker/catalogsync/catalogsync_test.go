package catalogsync

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/sinks/sink"
)

// syncState is a replicated state for catalog sync tests.
type syncState struct {
	mu      sync.Mutex
	tables  map[string]*Table
	commits map[string]ledger.Assignment
	ch      chan struct{}            // closed at every change (Watch)
	tableCh map[string]chan struct{} // closed at a change to the table (WatchTable)
	reads   map[string]int           // Table calls per key: one per round of its loop
}

func newSyncState() *syncState {
	return &syncState{tables: map[string]*Table{}, commits: map[string]ledger.Assignment{}, ch: make(chan struct{}),
		tableCh: map[string]chan struct{}{}, reads: map[string]int{}}
}

// changed wakes the global watchers and those of table key, like the FSM.
// Called with s.mu held.
func (s *syncState) changed(key string) {
	close(s.ch)
	s.ch = make(chan struct{})
	if ch, ok := s.tableCh[key]; ok {
		close(ch)
		delete(s.tableCh, key)
	}
}

func (s *syncState) WatchTable(key string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.tableCh[key]
	if !ok {
		ch = make(chan struct{})
		s.tableCh[key] = ch
	}
	return ch
}

func (s *syncState) commit(key, loc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tables[key]
	if t == nil {
		// Formats as a routed table's: the node's worker knows them.
		t = &Table{Key: key, Ident: ledger.TableIdent(key), Synced: map[string]SyncedAt{}, Formats: []string{Iceberg}}
		s.tables[key] = t
	}
	t.PreviousMetadataLocation, t.MetadataLocation = t.MetadataLocation, loc
	s.changed(key)
}

func (s *syncState) assign(key string, a ledger.Assignment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commits[key] = a
	s.changed(key)
}

func (s *syncState) Tables() []Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Table
	for _, t := range s.tables {
		c := *t
		c.Synced = map[string]SyncedAt{}
		for k, v := range t.Synced {
			c.Synced[k] = v
		}
		out = append(out, c)
	}
	return out
}

func (s *syncState) Table(key string) (Table, bool) {
	s.mu.Lock()
	s.reads[key]++
	s.mu.Unlock()
	for _, t := range s.Tables() {
		if t.Key == key {
			return t, true
		}
	}
	return Table{}, false
}

func (s *syncState) Committer(key string) (ledger.Assignment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.commits[key]
	return a, ok
}

// WatchFormats: setFormats is a state change here, which Watch reports.
func (s *syncState) WatchFormats() <-chan struct{} { return nil }

func (s *syncState) Watch() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}

var errStale = errors.New("stale committer")

// CatalogSynced records like the FSM: fenced by the committer.
func (s *syncState) CatalogSynced(_ context.Context, table, catalog, loc string, a ledger.Assignment, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	base := table
	if _, ok := s.commits[base]; !ok && len(base) > 4 {
		base = base[:len(base)-4]
	}
	if s.commits[base] != a {
		return fmt.Errorf("%w: %w", errStale, ledger.ErrStaleCommitter) // the FSM's refusal
	}
	s.tables[table].Synced[catalog] = SyncedAt{MetadataLocation: loc, At: at}
	s.changed(table)
	return nil
}

func (s *syncState) synced(table, catalog string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tables[table]; t != nil {
		return t.Synced[catalog].MetadataLocation
	}
	return ""
}

// fakeSyncer records calls and fails while down.
type fakeSyncer struct {
	name string
	mu   sync.Mutex
	down bool
	hang bool // calls block until their context ends
	got  []sink.SyncTable
}

func (f *fakeSyncer) Name() string { return f.name }

func (f *fakeSyncer) Sync(ctx context.Context, t sink.SyncTable) error {
	f.mu.Lock()
	down, hang := f.down, f.hang
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return ctx.Err()
	}
	if down {
		return errors.New("catalog unreachable")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, t)
	return nil
}

func (f *fakeSyncer) set(down, hang bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down, f.hang = down, hang
}

func (f *fakeSyncer) calls() []sink.SyncTable {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sink.SyncTable(nil), f.got...)
}

func syncEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.For(t, 10*time.Second, what, cond)
}

// readCounter counts one node's reads of the table list: the first read
// after a change shows its supervisor has decided which loops to run.
type readCounter struct {
	*syncState
	reads atomic.Int64
}

func (r *readCounter) Tables() []Table {
	defer r.reads.Add(1)
	return r.syncState.Tables()
}

func startSync(t *testing.T, st interface {
	State
	Recorder
}, node string, interval time.Duration, syncers ...Catalog) *Sync {
	t.Helper()
	cs := New(Config{NodeID: node, Interval: interval, Timeout: 200 * time.Millisecond}, st, st, syncers, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); cs.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return cs
}

func TestCatalogSyncCoalesces(t *testing.T) {
	st := newSyncState()
	st.assign("db\x1fo", ledger.Assignment{Node: "n1", Epoch: 1})
	glue, rest := &fakeSyncer{name: "glue"}, &fakeSyncer{name: "rest"}
	cs := startSync(t, st, "n1", 300*time.Millisecond, glue, rest)
	pace := time.NewTicker(20 * time.Millisecond) // a commit every 20 ms: faster than the mirror syncs
	defer pace.Stop()
	for i := range 30 {
		st.commit("db\x1fo", fmt.Sprintf("m/%05d.metadata.json", i))
		<-pace.C
	}
	st.commit("db\x1fo_dlq", "dlq/00000.metadata.json")
	for _, f := range []*fakeSyncer{glue, rest} {
		syncEventually(t, f.name+" current", func() bool {
			return st.synced("db\x1fo", f.name) == "m/00029.metadata.json" && st.synced("db\x1fo_dlq", f.name) == "dlq/00000.metadata.json"
		})
		var main []sink.SyncTable
		for _, c := range f.calls() {
			if c.Key == "db\x1fo" {
				main = append(main, c)
			}
		}
		// 30 commits over 600 ms with a 300 ms interval: a few syncs.
		if len(main) > 4 {
			t.Fatalf("%s: %d syncs for 30 commits, want them coalesced", f.name, len(main))
		}
		for i := 1; i < len(main); i++ {
			if main[i].MetadataLocation <= main[i-1].MetadataLocation || main[i].PreviousMetadataLocation != main[i-1].MetadataLocation {
				t.Fatalf("%s: sync %d went from %s to %s", f.name, i, main[i-1].MetadataLocation, main[i].MetadataLocation)
			}
		}
	}
	s := cs.Status()["db\x1fo"]["glue"]
	if s.Syncs == 0 || s.LastError != "" || !s.BehindSince.IsZero() || s.MetadataLocation != "m/00029.metadata.json" {
		t.Fatalf("status %+v", s)
	}
}

func TestCatalogSyncDownThenCatchesUp(t *testing.T) {
	st := newSyncState()
	st.assign("db\x1fo", ledger.Assignment{Node: "n1", Epoch: 1})
	glue := &fakeSyncer{name: "glue"}
	glue.set(false, true) // slow: every call times out
	cs := startSync(t, st, "n1", 50*time.Millisecond, glue)
	st.commit("db\x1fo", "m/00001.metadata.json")
	syncEventually(t, "a timed-out sync in status", func() bool {
		s := cs.Status()["db\x1fo"]["glue"]
		return s.Failures > 0 && s.LastError != "" && !s.BehindSince.IsZero()
	})
	glue.set(true, false) // down: fails fast
	for i := 2; i < 10; i++ {
		st.commit("db\x1fo", fmt.Sprintf("m/%05d.metadata.json", i)) // commits go on meanwhile
	}
	syncEventually(t, "errors while down", func() bool { return cs.Status()["db\x1fo"]["glue"].Failures > 2 })
	glue.set(false, false)
	syncEventually(t, "catching up", func() bool { return st.synced("db\x1fo", "glue") == "m/00009.metadata.json" })
	s := cs.Status()["db\x1fo"]["glue"]
	if s.LastError != "" || !s.BehindSince.IsZero() {
		t.Fatalf("status after catching up %+v", s)
	}
}

func TestCatalogSyncFollowsCommitter(t *testing.T) {
	st := newSyncState()
	st.assign("db\x1fo", ledger.Assignment{Node: "n2", Epoch: 1})
	st.commit("db\x1fo", "m/00001.metadata.json")
	g1, g2 := &fakeSyncer{name: "glue"}, &fakeSyncer{name: "glue"}
	v1 := &readCounter{syncState: st}
	cs1 := startSync(t, v1, "n1", 10*time.Millisecond, g1)
	startSync(t, st, "n2", 10*time.Millisecond, g2)
	syncEventually(t, "n2 syncs", func() bool { return st.synced("db\x1fo", "glue") == "m/00001.metadata.json" })
	// n1 has read the state that names n2 the committer: it starts no loop
	// for the table, so nothing can sync it from n1.
	syncEventually(t, "n1 reads the state", func() bool { return v1.reads.Load() > 0 })
	if len(g1.calls()) != 0 {
		t.Fatalf("a node that does not commit the table synced it: %+v", g1.calls())
	}
	// The role moves to n1: it resumes from the record and does not sync
	// the location n2 already synced.
	st.assign("db\x1fo", ledger.Assignment{Node: "n1", Epoch: 2})
	// n1's loop for the table has looked at it once it shows in status;
	// had it found the catalog behind, it would show BehindSince and sync.
	syncEventually(t, "n1's loop looks at the table", func() bool {
		_, ok := cs1.Status()["db\x1fo"]["glue"]
		return ok
	})
	if s := cs1.Status()["db\x1fo"]["glue"]; len(g1.calls()) != 0 || !s.BehindSince.IsZero() {
		t.Fatalf("new committer re-synced a synced location: %+v (status %+v)", g1.calls(), s)
	}
	st.commit("db\x1fo", "m/00002.metadata.json")
	syncEventually(t, "n1 syncs the next commit", func() bool { return st.synced("db\x1fo", "glue") == "m/00002.metadata.json" })
	if c := g1.calls(); len(c) != 1 || c[0].PreviousMetadataLocation != "m/00001.metadata.json" {
		t.Fatalf("n1 calls %+v", c)
	}
	if n := len(g2.calls()); n != 1 {
		t.Fatalf("the old committer synced %d times, want 1", n)
	}
}

// TestCatalogSyncWakesOnItsTable: commits to one table wake its sync loop,
// not another table's.
func TestCatalogSyncWakesOnItsTable(t *testing.T) {
	st := newSyncState()
	a, b := "db\x1fa", "db\x1fb"
	for _, k := range []string{a, b} {
		st.assign(k, ledger.Assignment{Node: "n1", Epoch: 1})
		st.commit(k, k+"/00000.metadata.json")
	}
	glue := &fakeSyncer{name: "glue"}
	startSync(t, st, "n1", time.Millisecond, glue)
	syncEventually(t, "both tables synced", func() bool {
		return st.synced(a, "glue") == a+"/00000.metadata.json" && st.synced(b, "glue") == b+"/00000.metadata.json"
	})
	reads := func(k string) int {
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.reads[k]
	}
	// b's loop has read its table after its sync was recorded: it waits.
	syncEventually(t, "b's loop waiting", func() bool { return reads(b) >= 2 })
	before := reads(b)
	for i := 1; i <= 20; i++ {
		loc := fmt.Sprintf("%s/%05d.metadata.json", a, i)
		st.commit(a, loc)
		syncEventually(t, "a synced", func() bool { return st.synced(a, "glue") == loc })
	}
	if n := reads(b) - before; n != 0 {
		t.Fatalf("20 commits and syncs of table a woke b's sync loop %d times, want 0", n)
	}
	st.commit(b, b+"/00001.metadata.json")
	syncEventually(t, "b synced", func() bool { return st.synced(b, "glue") == b+"/00001.metadata.json" })
}
