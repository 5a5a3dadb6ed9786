package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
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
	return namespace, name, nil
}

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
		if !tableNameRe.MatchString(sample) {
			bad(f(fld.field), "%q: after expansion use letters, digits, '_' and '-' (no dots)", fld.tmpl)
		}
	}
	if t.Topic != "" && t.TopicRegex == "" {
		if _, name, err := t.Target(t.Topic, nil); err == nil && strings.HasSuffix(name, "_dlq") {
			bad(f("name"), "%q: the _dlq suffix is reserved for dead-letter tables", name)
		}
	} else if strings.HasSuffix(sampleOf(t.Name), "_dlq") {
		bad(f("name"), "%q: the _dlq suffix is reserved for dead-letter tables", t.Name)
	}
}

func sampleOf(tmpl string) string { return placeholderRe.ReplaceAllString(tmpl, "x") }

var tableNameRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_\-]*$`)
