//go:build long

package e2e

// The fleet's load and its observer: a producer writing to every partition
// throughout, and a status watcher that checks committed offsets never move
// backwards and records freshness.

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/wait"
)

// producer writes JSON records to every partition of the fleet's topics
// until stopped, and counts per partition what the broker acknowledged.
// Each record's key, its header k and its payload field k are the same
// unique string, so readers can tell rows apart and check columns.
type producer struct {
	f      *fleet
	mu     sync.Mutex
	next   map[string]int64 // "topic/p" -> next offset = records acknowledged
	cancel context.CancelFunc
	done   chan error
}

// startProducer produces perTick records to each partition every 100 ms.
func (f *fleet) startProducer(perTick int) *producer {
	p := &producer{f: f, next: map[string]int64{}, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() {
		defer close(p.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ctx.Err() == nil; n++ {
			if err := p.round(n, perTick); err != nil {
				p.done <- err
				return
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	}()
	f.t.Cleanup(func() { p.cancel(); <-p.done })
	return p
}

func (p *producer) round(n, perTick int) error {
	var recs []*kgo.Record
	for _, topic := range p.f.topics {
		for part := range int32(fleetPartitions) {
			for j := range perTick {
				k := fmt.Sprintf("%s-%d-%d-%d", topic, part, n, j)
				recs = append(recs, &kgo.Record{Topic: topic, Partition: part, Key: []byte(k),
					Headers: []kgo.RecordHeader{{Key: "k", Value: []byte(k)}},
					Value:   fmt.Appendf(nil, `{"k":%q,"n":%d,"pad":"%048d"}`, k, n, n)})
			}
		}
	}
	// Not cancelled with the producer: a produce cut short would leave
	// records of unknown fate in Kafka.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := p.f.client.ProduceSync(ctx, recs...)
	if err := res.FirstErr(); err != nil {
		return fmt.Errorf("producing: %w", err)
	}
	got := map[string][]int64{}
	for _, r := range res {
		tp := fmt.Sprintf("%s/%d", r.Record.Topic, r.Record.Partition)
		got[tp] = append(got[tp], r.Record.Offset)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for tp, offs := range got {
		slices.Sort(offs)
		for i, o := range offs {
			if want := p.next[tp] + int64(i); o != want {
				return fmt.Errorf("producer: %s acknowledged offset %d, expected %d (offsets must be dense from 0)", tp, o, want)
			}
		}
		p.next[tp] += int64(len(offs))
	}
	return nil
}

// counts returns what has been acknowledged so far.
func (p *producer) counts() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int64, len(p.next))
	for k, v := range p.next {
		out[k] = v
	}
	return out
}

// stop ends production and returns the final counts.
func (p *producer) stop() map[string]int64 {
	p.cancel()
	if err := <-p.done; err != nil {
		p.f.t.Fatal(err)
	}
	c := p.counts()
	var total int64
	for _, v := range c {
		total += v
	}
	p.f.event("producer stopped: %d records acknowledged over %d partitions", total, len(c))
	return c
}

// watcher polls status (one running node per tick, round robin) and checks
// that committed offsets never move backwards: strictly within one process
// (an FSM never un-applies), and across nodes a node showing less than
// another showed must catch up within watchHeal. It also records the
// largest freshness and last-commit age seen per table.
type watcher struct {
	f        *fleet
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once

	mu         sync.Mutex
	perProc    map[string]int64 // "node#inc|table|tp" -> max committed
	global     map[string]int64 // "table|tp" -> max committed
	lags       map[string]lag   // "node#inc|table|tp" -> pending catch-up
	violations []string
	polls      int
	errors     int
	fresh      map[string]float64 // table -> max freshness_seconds
	age        map[string]float64 // table -> max last_commit_age_seconds
	freshAt    map[string]float64 // table -> when (s since t0) the max was seen
}

type lag struct {
	want int64
	seen time.Time
	node string
	inc  int
}

const watchHeal = 15 * time.Second

func (f *fleet) watch(interval time.Duration) *watcher {
	w := &watcher{f: f, done: make(chan struct{}), perProc: map[string]int64{}, global: map[string]int64{},
		lags: map[string]lag{}, fresh: map[string]float64{}, age: map[string]float64{}, freshAt: map[string]float64{}}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	f.watchers = append(f.watchers, w)
	go func() {
		defer close(w.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			ns := f.running()
			if len(ns) == 0 {
				continue
			}
			n := ns[i%len(ns)]
			inc, _ := f.incarnation(n)
			rep, err := f.fetch(n, 2*time.Second)
			// A restart during the request could attribute one process's
			// view to another: drop the observation.
			if inc2, ok := f.incarnation(n); err != nil || !ok || inc2 != inc {
				w.mu.Lock()
				w.errors++
				w.mu.Unlock()
				continue
			}
			w.observe(n.id, inc, rep)
		}
	}()
	return w
}

func (w *watcher) observe(node string, inc int, rep status.Report) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls++
	now := time.Now()
	proc := fmt.Sprintf("%s#%d", node, inc)
	for _, tr := range rep.Tables {
		if !tr.LastCommit.IsZero() {
			if tr.FreshnessSec > w.fresh[tr.Table] {
				w.fresh[tr.Table], w.freshAt[tr.Table] = tr.FreshnessSec, now.Sub(w.f.t0).Seconds()
			}
			w.age[tr.Table] = max(w.age[tr.Table], tr.LastCommitAgeSec)
		}
		for _, p := range tr.Partitions {
			if p.Epoch == 0 {
				continue // not in the ledger yet: the status shows the fetch position
			}
			key := fmt.Sprintf("%s|%s/%d", tr.Table, p.Topic, p.Partition)
			pk := proc + "|" + key
			if prev, ok := w.perProc[pk]; ok && p.Committed < prev {
				w.violations = append(w.violations, fmt.Sprintf("%+.1fs %s: %s committed went back from %d to %d in one process",
					now.Sub(w.f.t0).Seconds(), proc, key, prev, p.Committed))
			}
			w.perProc[pk] = max(w.perProc[pk], p.Committed)
			if l, ok := w.lags[pk]; ok && p.Committed >= l.want {
				delete(w.lags, pk)
			}
			if g := w.global[key]; p.Committed < g {
				if _, ok := w.lags[pk]; !ok {
					w.lags[pk] = lag{want: g, seen: now, node: node, inc: inc}
				}
			}
			w.global[key] = max(w.global[key], p.Committed)
		}
	}
	for pk, l := range w.lags {
		if l.node == node && l.inc != inc {
			delete(w.lags, pk) // that process is gone
		} else if l.node == node && now.Sub(l.seen) > watchHeal {
			w.violations = append(w.violations, fmt.Sprintf("%+.1fs %s: %s stayed below %d, which another node showed %.1fs earlier",
				now.Sub(w.f.t0).Seconds(), proc, pk, l.want, now.Sub(l.seen).Seconds()))
			delete(w.lags, pk)
		}
	}
}

// waitProgress waits until the watcher has seen every table's committed
// offsets move past where they stood when called, over at least one poll
// of each running node: a stretch of observed ingest, not of time.
func (w *watcher) waitProgress(timeout time.Duration) {
	w.f.t.Helper()
	sums := func() (map[string]int64, int) {
		w.mu.Lock()
		defer w.mu.Unlock()
		out := map[string]int64{}
		for key, c := range w.global {
			table, _, _ := strings.Cut(key, "|")
			out[table] += c
		}
		return out, w.polls
	}
	// A watcher just started has seen nothing yet: where the tables stand
	// is what it sees first.
	_, polls := sums()
	wait.Until(w.f.t, timeout, "the watcher to see committed offsets", func() error {
		if seen, p := sums(); len(seen) == 0 || p <= polls {
			return fmt.Errorf("%d tables seen in %d polls", len(seen), p-polls)
		}
		return nil
	})
	from, polls := sums()
	wait.Until(w.f.t, timeout, "every table to commit more", func() error {
		now, p := sums()
		if p < polls+len(w.f.running()) {
			return fmt.Errorf("%d polls since, want %d", p-polls, len(w.f.running()))
		}
		for table, c := range from {
			if now[table] <= c {
				return fmt.Errorf("%s still at %d committed offsets", table, c)
			}
		}
		return nil
	})
}

// stop ends polling and reports violations as test errors.
func (w *watcher) stop() {
	w.stopOnce.Do(func() {
		w.cancel()
		<-w.done
		w.mu.Lock()
		defer w.mu.Unlock()
		w.f.t.Logf("status watcher: %d observations (%d dropped), %d partitions, %d violations", w.polls, w.errors, len(w.global), len(w.violations))
		for _, v := range w.violations {
			w.f.t.Errorf("committed offsets moved backwards: %s", v)
		}
	})
}

// maxFreshness returns the largest freshness seen over all tables, and
// a per-table summary.
func (w *watcher) maxFreshness() (float64, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var m float64
	var parts []string
	for _, tbl := range slices.Sorted(maps.Keys(w.fresh)) {
		m = max(m, w.fresh[tbl])
		parts = append(parts, fmt.Sprintf("%s freshness max %.1fs (at %+.1fs), last-commit age max %.1fs", tbl, w.fresh[tbl], w.freshAt[tbl], w.age[tbl]))
	}
	return m, strings.Join(parts, "; ")
}

// pick returns a random element.
func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// maxCommitted returns the largest committed offset seen per
// "namespace.table|topic/partition".
func (w *watcher) maxCommitted() map[string]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int64, len(w.global))
	for k, v := range w.global {
		out[k] = v
	}
	return out
}
