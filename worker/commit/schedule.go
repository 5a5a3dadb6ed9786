package commit

import (
	"path"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

// schedule decides when a table's maintenance is due. It belongs to one
// commit loop's goroutine.
type schedule struct {
	lastExpire, lastCompact time.Time
	lastOrphans             time.Time
	lastAppend              time.Time
	recent                  recentFiles // files committed within the cool-down
	budget                  hourlyBudget
	// started and phase place the first compaction: phase (worker/phase)
	// of an interval after the loop started, so that tables started
	// together do not all compact in the same minute.
	started time.Time
	phase   float64
	// An idle table makes no requests (issue 38). compactSettled: a
	// compaction planned while the table was cool (planHot false) found
	// nothing to do and nothing was appended since, so planning again
	// would read the same manifests to the same end. orphansClean: an
	// orphan cleanup that began at least orphan_min_age after the last
	// append (and after the last compaction's writes) succeeded, so every
	// file they could have left behind was old enough for it; cleanups then
	// run idleOrphanFactor times less often (not never: a writer that
	// crashed leaves files no append follows).
	compactSettled, planHot bool
	orphansClean            bool
	lastWrite               time.Time // the last append or compaction output
}

// idleOrphanFactor stretches the orphan cleanup interval of a clean idle
// table: hourly becomes daily.
const idleOrphanFactor = 24

func newSchedule(now time.Time, phase float64) schedule {
	// Orphans are first cleaned one interval after start; the table counts
	// as hot after a restart until its cool-down passes.
	return schedule{lastOrphans: now, lastAppend: now, lastWrite: now, started: now, phase: phase}
}

// expireDue reports whether expiry is due, and if so counts it as run.
func (s *schedule) expireDue(every time.Duration) bool {
	if time.Since(s.lastExpire) < every {
		return false
	}
	s.lastExpire = time.Now()
	return true
}

// orphansDue reports whether orphan cleanup is due, and if so counts it as
// run.
func (s *schedule) orphansDue(every time.Duration) bool {
	if s.orphansClean {
		every *= idleOrphanFactor
	}
	if time.Since(s.lastOrphans) < every {
		return false
	}
	s.lastOrphans = time.Now()
	return true
}

// compaction returns the policy of a compaction run that is due now, and
// counts it as run; ok is false when none is due or the hour's budget is
// spent.
func (s *schedule) compaction(m config.Table, defaultTarget config.ByteSize) (sink.CompactionPolicy, bool) {
	every := m.Compaction.Interval.D()
	if s.lastCompact.IsZero() {
		s.lastCompact = s.started.Add(time.Duration(s.phase*float64(every)) - every)
	}
	if s.compactSettled || !m.Compaction.On() || time.Since(s.lastCompact) < every || !m.Compaction.InWindow(time.Now()) {
		return sink.CompactionPolicy{}, false
	}
	s.lastCompact = time.Now()
	left := s.budget.left(int64(m.Compaction.MaxBytesPerHour), time.Now())
	if left <= 0 {
		return sink.CompactionPolicy{}, false
	}
	target := int64(m.Compaction.TargetFileSize)
	if target == 0 {
		target = int64(defaultTarget)
	}
	s.planHot = time.Since(s.lastAppend) < m.Compaction.CoolDown.D()
	return sink.CompactionPolicy{TargetFileSize: target, MinInputFiles: m.Compaction.MinInputFiles,
		HotMinInputFiles: m.Compaction.HotMinInputFiles, Hot: s.planHot,
		HotFiles: s.recent.since(time.Now().Add(-m.Compaction.CoolDown.D())), SmallRatio: m.Compaction.SmallRatio, MaxBytes: left}, true
}

// appended notes entries committed now.
func (s *schedule) appended(entries []ledger.Entry) {
	s.lastAppend = time.Now()
	s.lastWrite = s.lastAppend
	s.recent.add(entries, s.lastAppend)
	s.compactSettled, s.orphansClean = false, false
}

// planned notes a background compaction plan's outcome: one that found
// nothing to do on a cool table settles compaction until the next append.
func (s *schedule) planned(out rewriteOutcome) {
	if out.err == nil && !s.planHot && (out.rw == nil || out.rw.Stats().FilesBefore == 0) {
		s.compactSettled = true
	}
	if out.rw != nil && out.rw.Stats().FilesAfter > 0 {
		// Written files: orphans if the rewrite is abandoned.
		s.lastWrite, s.orphansClean = time.Now(), false
	}
}

// cleaned notes an orphan cleanup's outcome (it began at lastOrphans);
// minAge is the table's orphan_min_age.
func (s *schedule) cleaned(err error, minAge time.Duration) {
	if err == nil && s.lastOrphans.After(s.lastAppend.Add(minAge)) && s.lastOrphans.After(s.lastWrite.Add(minAge)) {
		s.orphansClean = true
	}
}

// recentFiles remembers when this loop committed each data file, so that
// compaction knows which partitions are still being written.
type recentFiles struct {
	started time.Time
	at      map[string]time.Time // file base name -> commit time
}

func (r *recentFiles) add(entries []ledger.Entry, now time.Time) {
	if r.at == nil {
		r.at, r.started = map[string]time.Time{}, now
	}
	for _, e := range entries {
		for _, f := range e.Files {
			r.at[path.Base(f.Path)] = now
		}
	}
}

// since returns the files committed after t, nil when the loop has not
// been running that long (then the whole table counts as hot).
func (r *recentFiles) since(t time.Time) map[string]bool {
	if r.at == nil || r.started.After(t) {
		return nil
	}
	out := map[string]bool{}
	for f, at := range r.at {
		if at.After(t) {
			out[f] = true
		} else {
			delete(r.at, f)
		}
	}
	return out
}

// hourlyBudget tracks the input bytes compaction rewrote in the current hour.
type hourlyBudget struct {
	start time.Time
	used  int64
}

func (h *hourlyBudget) left(limit int64, now time.Time) int64 {
	if now.Sub(h.start) >= time.Hour {
		h.start, h.used = now, 0
	}
	return limit - h.used
}
