package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/floe-io/floe/internal/names"
)

var placeholderRe = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// Target expands a mapping's namespace and name templates for one topic.
// Placeholders: {topic} is the topic name sanitized (characters other than
// letters, digits and _ become _); with topic_regex, {0} is the whole match,
// {1}...{n} the capture groups and {group} a named group, each sanitized the
// same way. re is the compiled topic_regex (nil for an exact topic).
func (t Table) Target(topic string, re *regexp.Regexp) (namespace, name string, err error) {
	values := map[string]string{"topic": SanitizeName(topic)}
	if re != nil {
		m := re.FindStringSubmatch(topic)
		if m == nil {
			return "", "", fmt.Errorf("topic %s does not match %s", topic, re)
		}
		for i, g := range m {
			values[strconv.Itoa(i)] = SanitizeName(g)
		}
		for i, n := range re.SubexpNames() {
			if n != "" {
				values[n] = SanitizeName(m[i])
			}
		}
	}
	expand := func(tmpl string) (string, error) {
		var missing string
		out := placeholderRe.ReplaceAllStringFunc(tmpl, func(ph string) string {
			k := ph[1 : len(ph)-1]
			v, ok := values[k]
			if !ok {
				missing = ph
			}
			return v
		})
		if missing != "" {
			return "", fmt.Errorf("unknown placeholder %s", missing)
		}
		return out, nil
	}
	if namespace, err = expand(t.Namespace); err != nil {
		return "", "", err
	}
	if name, err = expand(t.Name); err != nil {
		return "", "", err
	}
	// A topic name fills a template at run time: the expansion must still
	// be a name every store accepts (a long topic can push it past 255).
	if r := names.Reason(namespace); r != "" {
		return "", "", &NameError{Field: "namespace", Reason: r}
	}
	if r := names.Reason(name); r != "" {
		return "", "", &NameError{Field: "name", Reason: r}
	}
	return namespace, name, nil
}

// NameError: a template expanded for a topic into a name that breaks the
// naming rule (package names). Field is namespace or name.
type NameError struct{ Field, Reason string }

func (e *NameError) Error() string { return "table " + e.Field + ": " + e.Reason }

// Unwrap makes errors.Is(err, names.ErrInvalid) hold.
func (e *NameError) Unwrap() error { return names.ErrInvalid }

// UsesTopic reports whether the mapping's templates depend on the topic, so
// that different topics land in different tables. A template that does not
// (fan-in: several topics into one table) is allowed on purpose.
func (t Table) UsesTopic() bool {
	return placeholderRe.MatchString(t.Namespace) || placeholderRe.MatchString(t.Name)
}

// checkTemplates validates a mapping's templates at start-up: every
// placeholder must exist, and a sample expansion must be a legal name.
func (t Table) checkTemplates(bad func(field, format string, args ...any), f func(string) string) {
	var re *regexp.Regexp
	if t.TopicRegex != "" {
		var err error
		if re, err = regexp.Compile(t.TopicRegex); err != nil {
			return // reported by the caller
		}
	}
	known := map[string]bool{"topic": true}
	if re != nil {
		for i := 0; i <= re.NumSubexp(); i++ {
			known[strconv.Itoa(i)] = true
		}
		for _, n := range re.SubexpNames() {
			if n != "" {
				known[n] = true
			}
		}
	}
	for _, fld := range []struct{ field, tmpl string }{{"namespace", t.Namespace}, {"name", t.Name}} {
		for _, m := range placeholderRe.FindAllStringSubmatch(fld.tmpl, -1) {
			if !known[m[1]] {
				hint := "use {topic}"
				if re != nil {
					hint = fmt.Sprintf("use {topic}, {0}..{%d} or a named group of topic_regex", re.NumSubexp())
				}
				bad(f(fld.field), "unknown placeholder {%s}: %s", m[1], hint)
			}
		}
		sample := placeholderRe.ReplaceAllString(fld.tmpl, "x")
		if strings.ContainsAny(fld.tmpl, "{}") && placeholderRe.ReplaceAllString(fld.tmpl, "") == fld.tmpl {
			bad(f(fld.field), "%q has an unclosed or empty placeholder", fld.tmpl)
			continue
		}
		if r := names.Reason(sample); r != "" {
			bad(f(fld.field), "after expansion (placeholders as x): %s", r)
		}
	}
	if t.Topic != "" && t.TopicRegex == "" {
		_, name, err := t.Target(t.Topic, nil)
		if ne := (*NameError)(nil); errors.As(err, &ne) {
			bad(f(ne.Field), "for topic %s: %s", t.Topic, ne.Reason)
		} else if err == nil && strings.HasSuffix(name, "_dlq") {
			bad(f("name"), "%q: the _dlq suffix is reserved for dead-letter tables", name)
		}
	} else if strings.HasSuffix(sampleOf(t.Name), "_dlq") {
		bad(f("name"), "%q: the _dlq suffix is reserved for dead-letter tables", t.Name)
	}
}

func sampleOf(tmpl string) string { return placeholderRe.ReplaceAllString(tmpl, "x") }

// Bounds of a mapping's free-form fields: a mapping made through the admin
// API is replicated to every node and kept in every snapshot, so what a
// client may put there is bounded (package names bounds the names).
const (
	maxTopicRegex   = 1024
	maxSubject      = 1024
	maxPartitionBy  = 32
	maxUpsertKey    = 16 // key fields of an upsert table
	maxColumnName   = names.MaxName
	maxTemplateSize = 1024
	maxWord         = 64
)

// checkBounds checks the lengths and characters of a mapping's strings
// before the other rules look at them: a 100 MB template is refused for its
// size, not compiled, expanded or quoted in the next rule's error. It
// reports whether every bound holds; the caller checks nothing more then.
func (t *Table) checkBounds(f func(string) string, bad func(field, format string, args ...any)) bool {
	ok := true
	if t.Topic != "" && !topicRe.MatchString(t.Topic) {
		bad(f("topic"), "%s is not a legal Kafka topic name (1 to 249 letters, digits, '.', '_' and '-')", names.Preview(t.Topic))
		ok = false
	}
	for _, fld := range []struct {
		name string
		v    string
		max  int
	}{
		{"topic_regex", t.TopicRegex, maxTopicRegex},
		{"subject", t.Subject, maxSubject},
		{"namespace", t.Namespace, maxTemplateSize},
		{"name", t.Name, maxTemplateSize},
		{"dead_letter_topic", t.DeadLetterTopic, maxTopicRegex},
		// Words from a short list: bounded so that the error naming a
		// wrong one stays short.
		{"format", t.Format, maxWord},
		{"error_mode", t.ErrorMode, maxWord},
		{"tombstones", t.Tombstones, maxWord},
		{"start_offset", t.StartOffset, maxWord},
		{"mode", t.Mode, maxWord},
		{"compaction.window", t.Compaction.Window, maxWord},
		{"storage_class", t.StorageClass, maxWord},
	} {
		if r := names.TextReason(fld.v, fld.max); r != "" {
			bad(f(fld.name), "%s", r)
			ok = false
		}
	}
	if len(t.PartitionBy) > maxPartitionBy {
		bad(f("partition_by"), "%d fields, more than %d", len(t.PartitionBy), maxPartitionBy)
		return false
	}
	if len(t.Key) > maxUpsertKey {
		bad(f("key"), "%d fields, more than %d", len(t.Key), maxUpsertKey)
		return false
	}
	for j, k := range t.Key {
		if r := names.TextReason(k, maxColumnName); r != "" {
			bad(f(fmt.Sprintf("key[%d]", j)), "%s", r)
			ok = false
		}
	}
	for j, pf := range t.PartitionBy {
		if r := names.TextReason(pf.Column, maxColumnName); r != "" {
			bad(f(fmt.Sprintf("partition_by[%d].column", j)), "%s", r)
			ok = false
		}
		if r := names.TextReason(pf.Transform, maxWord); r != "" {
			bad(f(fmt.Sprintf("partition_by[%d].transform", j)), "%s", r)
			ok = false
		}
	}
	return ok
}
