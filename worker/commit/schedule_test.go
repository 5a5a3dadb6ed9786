package commit

import (
	"errors"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

type fakeRewrite struct{ files int }

func (r fakeRewrite) Stats() sink.RewriteStats {
	return sink.RewriteStats{FilesBefore: r.files, FilesAfter: min(r.files, 1)}
}

// TestIdleTableMakesNoMaintenanceRequests: once a table goes idle, a
// compaction plan made on it while cool that finds nothing is the last
// (planning again would read the same manifests to the same end), and
// after an orphan cleanup begun orphan_min_age past its last append and
// its last compaction output, cleanups run daily instead of hourly. Any
// append makes both due again; a plan made while hot, one that found
// work, a failed one, or a cleanup too soon after a write settles
// nothing.
func TestIdleTableMakesNoMaintenanceRequests(t *testing.T) {
	m := config.Table{}
	m.Compaction.Interval = config.Duration(time.Minute)
	m.Compaction.CoolDown = config.Duration(5 * time.Minute)
	m.Compaction.MinInputFiles = 5
	m.Compaction.MaxBytesPerHour = 1 << 40
	const minAge = 24 * time.Hour
	long := time.Now().Add(-48 * time.Hour)
	idle := func() *schedule {
		s := newSchedule(long, 0.5)
		s.lastAppend, s.lastCompact, s.lastOrphans, s.lastWrite = long, long, long, long
		return &s
	}
	compactDue := func(s *schedule) bool {
		s.lastCompact = long // the interval is always over
		_, due := s.compaction(m, 1<<20)
		return due
	}

	for _, c := range []struct {
		name    string
		hot     bool
		out     rewriteOutcome
		settles bool
	}{
		{"nothing to do on a cool table", false, rewriteOutcome{}, true},
		{"a plan of no files", false, rewriteOutcome{rw: fakeRewrite{}}, true},
		{"files to rewrite", false, rewriteOutcome{rw: fakeRewrite{files: 6}}, false},
		{"the plan failed", false, rewriteOutcome{err: errors.New("s3 down")}, false},
		{"planned while hot", true, rewriteOutcome{}, false},
	} {
		t.Run("compaction: "+c.name, func(t *testing.T) {
			s := idle()
			if c.hot {
				s.lastAppend = time.Now()
			}
			if !compactDue(s) {
				t.Fatal("compaction not due before any plan")
			}
			s.planned(c.out)
			if got := !compactDue(s); got != c.settles {
				t.Fatalf("settled %v, want %v", got, c.settles)
			}
			s.appended([]ledger.Entry{{ID: "e"}})
			if !compactDue(s) {
				t.Fatal("compaction not due after an append")
			}
		})
	}

	for _, c := range []struct {
		name      string
		sinceApp  time.Duration // from the last append to the cleanup's start
		sinceComp time.Duration // from the last compaction output, 0 for none
		err       error
		clean     bool
	}{
		{"began after orphan_min_age", 25 * time.Hour, 0, nil, true},
		{"began within orphan_min_age", time.Hour, 0, nil, false},
		{"a compaction wrote files since", 25 * time.Hour, time.Hour, nil, false},
		{"failed", 25 * time.Hour, 0, errors.New("s3 down"), false},
	} {
		t.Run("orphans: "+c.name, func(t *testing.T) {
			s := idle()
			s.lastAppend = time.Now().Add(-c.sinceApp)
			if c.sinceComp > 0 {
				s.planned(rewriteOutcome{rw: fakeRewrite{files: 3}})
				s.lastWrite = time.Now().Add(-c.sinceComp)
			}
			if !s.orphansDue(time.Hour) {
				t.Fatal("orphan cleanup not due")
			}
			s.cleaned(c.err, minAge)
			s.lastOrphans = time.Now().Add(-2 * time.Hour) // the hourly interval is over
			if got := !s.orphansDue(time.Hour); got != c.clean {
				t.Fatalf("clean %v, want %v", got, c.clean)
			}
			if c.clean {
				// A clean idle table is still cleaned daily: a writer that
				// crashed leaves files no append follows.
				s.lastOrphans = time.Now().Add(-25 * time.Hour)
				if !s.orphansDue(time.Hour) {
					t.Fatal("a clean idle table's daily cleanup not due")
				}
				s.cleaned(nil, minAge)
			}
			s.lastOrphans = time.Now().Add(-2 * time.Hour)
			s.appended(nil)
			if !s.orphansDue(time.Hour) {
				t.Fatal("orphan cleanup not due after an append")
			}
		})
	}
}
