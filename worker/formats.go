package worker

import (
	"maps"
	"slices"
	"strings"

	"github.com/floe-io/floe/internal/config"
)

// dlqSuffix names a table's dead-letter table (<table>_dlq), which is
// published in its table's formats (sinks/delta/follow_dlq.go).
const dlqSuffix = "_dlq"

// PublishedAsIceberg reports whether the table is served as an Iceberg
// table (the REST catalog endpoint): every table but one whose mapping
// says [delta], published only as Delta. A table whose formats are not
// known (no mapping routes into it) keeps being served, as it keeps its
// catalog entries.
func (w *Worker) PublishedAsIceberg(table string) bool {
	f := w.Formats(table)
	return f == nil || slices.Contains(f, config.FormatIceberg)
}

// Formats are the table formats of the mapping that routes into the table
// ([iceberg] when it names none), or into the table whose dead-letter
// table it is; nil when no mapping does.
func (w *Worker) Formats(table string) []string {
	// A scan of the routes, not formatsOf's map: the status report asks
	// for every table, and building the map each time made a report
	// quadratic in the tables (7% of a node's CPU at 1,000 tables).
	routes := w.knownRoutes()
	for _, key := range []string{table, strings.TrimSuffix(table, dlqSuffix)} {
		for _, r := range routes {
			if r.spec.Key == key {
				return mappingFormats(r.mapping)
			}
		}
		if !strings.HasSuffix(table, dlqSuffix) {
			break
		}
	}
	return nil
}

// mappingFormats is a mapping's formats, [iceberg] when it names none.
func mappingFormats(m config.Table) []string {
	if len(m.Formats) == 0 {
		return []string{config.FormatIceberg}
	}
	return slices.Clone(m.Formats)
}

// TableFormats are Formats for every table a mapping routes into, in one
// pass over the routes: catalog sync reads them at every state change, and
// a lookup per table would cost tables x routes each time.
func (w *Worker) TableFormats() map[string][]string {
	return formatsOf(w.knownRoutes())
}

// knownRoutes are the routes discovery found or, before the first
// discovery (which lists Kafka's topics), those of the mappings that name
// their topic exactly, which resolve without it: a node that starts while
// Kafka is slow or unreachable still knows their tables' formats, and does
// not publish a [delta] table as Iceberg in the meantime. Discovery
// replaces the routes map whole, never changing one in place, so the map
// returned is read without the lock.
func (w *Worker) knownRoutes() map[string]route {
	w.mu.Lock()
	routes, discovered := w.routes, w.mapped != nil
	w.mu.Unlock()
	if discovered {
		return routes
	}
	out := map[string]route{}
	for _, ref := range w.mappingList() {
		if topic := ref.t.Topic; topic != "" {
			if r, ok := w.resolve(topic); ok {
				out[topic] = r
			}
		}
	}
	return out
}

// WatchFormats returns a channel closed the next time discovery changes
// what TableFormats says (a mapping's formats changed, a route came or
// went, the first discovery): catalog sync follows the mappings, which
// change without any change to the tables it watches.
func (w *Worker) WatchFormats() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.formatsCh == nil {
		w.formatsCh = make(chan struct{})
	}
	return w.formatsCh
}

// setRoutes installs discovery's routes and wakes the WatchFormats
// watchers when the formats changed, or at the first discovery.
func (w *Worker) setRoutes(routes map[string]route, mapped map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	changed := w.mapped == nil || !maps.EqualFunc(formatsOf(w.routes), formatsOf(routes), slices.Equal[[]string])
	if w.formatsCh != nil && changed {
		close(w.formatsCh)
		w.formatsCh = nil
	}
	w.routes, w.mapped = routes, mapped
}

// formatsOf is TableFormats over routes: each routed table's mapping's
// formats ([iceberg] when it names none; the first route into a table
// decides, as lookup does), and the same for its dead-letter table.
func formatsOf(routes map[string]route) map[string][]string {
	out := make(map[string][]string, 2*len(routes))
	for _, r := range routes {
		if _, ok := out[r.spec.Key]; ok {
			continue
		}
		out[r.spec.Key] = mappingFormats(r.mapping)
	}
	for key := range maps.Clone(out) {
		if _, ok := out[key+dlqSuffix]; !ok && !strings.HasSuffix(key, dlqSuffix) {
			out[key+dlqSuffix] = slices.Clone(out[key])
		}
	}
	return out
}
