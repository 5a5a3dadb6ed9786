package worker

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/sinks/sink"
)

// lookup returns the spec and mapping of a table some mapping routes into.
func (w *Worker) lookup(table string) (sink.TableSpec, config.Table, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.routes {
		if r.spec.Key == table {
			return r.spec, r.mapping, true
		}
	}
	return sink.TableSpec{}, config.Table{}, false
}

// StorageClass is the storage_class of the mapping that routes into the
// table now: "" when it sets none or no mapping routes into the table (a
// dead-letter table has its own key and none). Discovery updates the
// routes when a mapping changes, so the next data file takes the new class.
func (w *Worker) StorageClass(table string) string {
	_, m, ok := w.lookup(table)
	if !ok {
		return ""
	}
	return m.StorageClass
}

// WritesDelta reports whether the mapping that routes into the table names
// delta in its formats, so its committer publishes a Delta log too.
func (w *Worker) WritesDelta(table string) bool {
	_, m, ok := w.lookup(table)
	return ok && m.WritesDelta()
}

// DeltaSettings are the Delta log settings of the mapping that routes into
// the table (zero values: the defaults).
func (w *Worker) DeltaSettings(table string) config.DeltaSettings {
	_, m, ok := w.lookup(table)
	if !ok {
		return config.DeltaSettings{}
	}
	return m.Delta
}

// Mapping is the mapping that routes a topic into the table now (false when
// none does).
func (w *Worker) Mapping(table string) (config.Table, bool) {
	_, m, ok := w.lookup(table)
	return m, ok
}

// Mapped reports whether a mapping routes into the table now. A table whose
// mapping was deleted keeps its data, its catalog entry and its registered
// sources, but nothing feeds it; the status says so instead of PENDING.
// Before the first discovery every table counts as mapped.
func (w *Worker) Mapped(table string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mapped == nil || w.mapped[table]
}

// mappingRef is a mapping with its compiled topic regex (nil for a topic).
type mappingRef struct {
	t  config.Table
	re *regexp.Regexp
}

// mappingList returns the configuration's mappings followed by those made
// through the admin API (replicated), in routing order: the first mapping
// that matches a topic routes it. API mappings were validated when made; a
// regex that does not compile here is skipped.
func (w *Worker) mappingList() []mappingRef {
	out := make([]mappingRef, 0, len(w.cfg.Tables))
	for i, t := range w.cfg.Tables {
		out = append(out, mappingRef{t: t, re: w.regexes[i]})
	}
	for _, t := range w.state.Mappings() {
		ref := mappingRef{t: t}
		if t.TopicRegex != "" {
			re, err := w.compiled(t.TopicRegex)
			if err != nil {
				continue
			}
			ref.re = re
		}
		out = append(out, ref)
	}
	return out
}

// compiled caches the regexes of API mappings.
func (w *Worker) compiled(expr string) (*regexp.Regexp, error) {
	w.reMu.Lock()
	defer w.reMu.Unlock()
	if re, ok := w.reCache[expr]; ok {
		return re, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	if w.reCache == nil {
		w.reCache = map[string]*regexp.Regexp{}
	}
	w.reCache[expr] = re
	return re, nil
}

// mappingIndex identifies a mapping by its position in mappingList.
func (w *Worker) mappingIndex(m config.Table) int {
	for i, ref := range w.mappingList() {
		t := ref.t
		if t.Topic == m.Topic && t.TopicRegex == m.TopicRegex && t.Namespace == m.Namespace && t.Name == m.Name {
			return i
		}
	}
	return -1
}

// resolve maps a topic to its table through the first matching mapping.
func (w *Worker) resolve(topic string) (route, bool) {
	r, ok, _ := w.resolveTopic(topic)
	return r, ok
}

// resolveTopic is resolve that also says why a matching topic has no
// table: its mapping's templates expand, for this topic, into a name that
// breaks the naming rule (a long topic can push a name past 255 bytes).
func (w *Worker) resolveTopic(topic string) (route, bool, error) {
	for _, ref := range w.mappingList() {
		t := ref.t
		var re *regexp.Regexp
		switch {
		case t.Topic != "" && t.Topic == topic:
		case ref.re != nil && ref.re.MatchString(topic):
			re = ref.re
		default:
			continue
		}
		ns, name, err := t.Target(topic, re)
		if err != nil {
			return route{}, false, fmt.Errorf("topic %s: %w", topic, err)
		}
		ident := []string{ns, name}
		return route{spec: sink.TableSpec{Key: ledger.TableKey(ident), Ident: ident, Format: t.Format, PartitionBy: t.PartitionBy, Mode: t.Mode, UpsertKey: t.Key}, mapping: t}, true, nil
	}
	return route{}, false, nil
}

// maxNamingProblems is how many unroutable topics the node-wide naming
// problem lists by name.
const maxNamingProblems = 3

// reportNaming sets (or clears) the node-wide "naming" problem: topics a
// mapping matches but cannot name a table for, which are not ingested.
func (w *Worker) reportNaming(failed []error) {
	if len(failed) == 0 {
		w.status.SetGlobal("naming", "")
		return
	}
	var parts []string
	for _, err := range failed[:min(len(failed), maxNamingProblems)] {
		parts = append(parts, err.Error())
	}
	msg := strings.Join(parts, "; ")
	if more := len(failed) - maxNamingProblems; more > 0 {
		msg += fmt.Sprintf("; and %d more topics", more)
	}
	w.status.SetGlobal("naming", msg+": not ingested, change the mapping's name template")
}

// collisions finds tables that several topics would share although their
// mapping names a table per topic (or that several mappings target), keeps
// the first topic of each and reports the others as a configuration issue.
func (w *Worker) collisions(routes map[string]route) {
	byTable := map[string][]string{}
	for _, topic := range slices.Sorted(maps.Keys(routes)) {
		byTable[routes[topic].spec.Key] = append(byTable[routes[topic].spec.Key], topic)
	}
	for key, topics := range byTable {
		msg := ""
		if len(topics) > 1 {
			first := w.mappingIndex(routes[topics[0]].mapping)
			var clash []string
			for _, tp := range topics[1:] {
				m := routes[tp].mapping
				if m.UsesTopic() || w.mappingIndex(m) != first {
					clash = append(clash, tp)
					delete(routes, tp)
				}
			}
			if len(clash) > 0 {
				msg = fmt.Sprintf("topics %s and %s both map to table %s; %s not ingested: change the name template",
					topics[0], strings.Join(clash, ", "), ledger.DisplayName(key), strings.Join(clash, ", "))
			}
		}
		w.status.Update(key, ledger.DisplayName(key), func(t *status.TableStatus) { t.Problem("config naming", msg) })
	}
}
