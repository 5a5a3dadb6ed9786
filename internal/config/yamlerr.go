package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// YAML errors that name the fix. yaml.v3 reports a value of the wrong type
// as "line 3: cannot unmarshal !!str `127.0.0...` into []string": a Go type
// and seven characters of the value, but not the field, nor what to write.
// explainYAML finds the node at that line by walking the document against
// the configuration's types (by their yaml tags) and says the field, the
// shape it takes and what was found:
//
//	line 3: kafka.bootstrap_servers: expected a list of strings, found the
//	string "127.0.0.1:9092"; write it as a list: [127.0.0.1:9092]

// yamlProblem is one explained error of a YAML document.
type yamlProblem struct {
	Line  int
	Field string // dotted path; "" when no field could be found
	Msg   string
}

func (p yamlProblem) String() string {
	if p.Field == "" {
		return p.Msg
	}
	return p.Field + ": " + p.Msg
}

var (
	typeErrRe    = regexp.MustCompile("^line ([0-9]+): cannot unmarshal (\\S+)(?: `(.*)`)? into (.+)$")
	unknownRe    = regexp.MustCompile(`^line ([0-9]+): field (.+) not found in type (.+)$`)
	lineErrRe    = regexp.MustCompile(`^line ([0-9]+): (.*)$`)
	maxShownYAML = 60 // characters of a found value quoted in an error
)

// yamlEntry is one node of a document with the field it fills.
type yamlEntry struct {
	path string
	typ  reflect.Type // the Go type the node decodes into; nil for an unknown key
	node *yaml.Node
	// key: the node is a mapping key of a struct; parent is that struct.
	key    bool
	parent reflect.Type
}

// explainYAML turns a yaml.v3 decoding error of data (decoded into a value
// of type root, whose fields are under the dotted prefix) into problems
// that name fields. Errors it does not recognise are kept as they are.
func explainYAML(data []byte, err error, root reflect.Type, prefix string) []yamlProblem {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return []yamlProblem{{Msg: strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	var doc yaml.Node
	var entries []yamlEntry
	if yaml.Unmarshal(data, &doc) == nil {
		entries = walkYAML(&doc, root, prefix)
	}
	out := make([]yamlProblem, 0, len(te.Errors))
	for _, e := range te.Errors {
		out = append(out, explainLine(e, entries))
	}
	return out
}

// walkYAML lists the nodes of doc that fill a field of t (or, for keys a
// struct does not have, the key). Aliases are not followed, so a document
// of aliases of aliases costs no more than its size.
func walkYAML(doc *yaml.Node, t reflect.Type, prefix string) []yamlEntry {
	var out []yamlEntry
	var walk func(n *yaml.Node, t reflect.Type, path string)
	walk = func(n *yaml.Node, t reflect.Type, path string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		out = append(out, yamlEntry{path: path, typ: t, node: n})
		switch {
		case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
			for i, c := range n.Content {
				walk(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
			}
		case n.Kind == yaml.MappingNode && t.Kind() == reflect.Map:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], t.Elem(), joinPath(path, n.Content[i].Value))
			}
		case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				f, ok := fieldByTag(t, k.Value)
				if !ok {
					out = append(out, yamlEntry{path: joinPath(path, k.Value), node: k, key: true, parent: t})
					continue
				}
				walk(n.Content[i+1], f.Type, joinPath(path, k.Value))
			}
		}
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		walk(doc.Content[0], t, prefix)
	}
	return out
}

func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// fieldByTag is the field of struct t whose yaml tag is name.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag == name && tag != "" && tag != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// yamlFields lists the yaml names of struct t's fields.
func yamlFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			out = append(out, tag)
		}
	}
	return out
}

// explainLine explains one line of a yaml.TypeError.
func explainLine(e string, entries []yamlEntry) yamlProblem {
	if m := typeErrRe.FindStringSubmatch(e); m != nil {
		line, _ := strconv.Atoi(m[1])
		if en, ok := findEntry(entries, line, m[4]); ok {
			return yamlProblem{Line: line, Field: en.path, Msg: mismatch(en)}
		}
		return yamlProblem{Line: line, Msg: strings.TrimPrefix(e, "line "+m[1]+": ")}
	}
	if m := unknownRe.FindStringSubmatch(e); m != nil {
		line, _ := strconv.Atoi(m[1])
		for _, en := range entries {
			if en.key && en.node.Line == line && en.node.Value == m[2] {
				return yamlProblem{Line: line, Field: en.path, Msg: unknownField(m[2], en.parent)}
			}
		}
		return yamlProblem{Line: line, Msg: "unknown field " + m[2]}
	}
	if m := lineErrRe.FindStringSubmatch(e); m != nil {
		// A unit type's own error ("soon" is not a duration): the field
		// on that line whose type has such errors.
		line, _ := strconv.Atoi(m[1])
		for _, en := range entries {
			if !en.key && en.node.Line == line && (en.typ == durationType || en.typ == sizeType) {
				return yamlProblem{Line: line, Field: en.path, Msg: m[2]}
			}
		}
		return yamlProblem{Line: line, Msg: m[2]}
	}
	return yamlProblem{Msg: e}
}

// findEntry is the node at line that decodes into a value of the Go type
// named goType; the deepest such node if several (a flow mapping puts a
// struct and its fields on one line).
func findEntry(entries []yamlEntry, line int, goType string) (yamlEntry, bool) {
	var best yamlEntry
	found := false
	for _, en := range entries {
		if en.key || en.node.Line != line || en.typ.String() != goType {
			continue
		}
		if !found || len(en.path) > len(best.path) {
			best, found = en, true
		}
	}
	return best, found
}

// mismatch says what the field takes and what it holds, and how to write
// it when that is plain.
func mismatch(en yamlEntry) string {
	msg := "expected " + shape(en.typ) + ", found " + foundValue(en)
	n := en.node
	switch {
	case n.Kind == yaml.ScalarNode && en.typ.Kind() == reflect.Slice && en.typ.Elem().Kind() == reflect.String && n.Tag == "!!str":
		var parts []string
		for _, p := range strings.Split(n.Value, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		msg += "; write it as a list: [" + strings.Join(parts, ", ") + "]"
	case n.Kind == yaml.ScalarNode && en.typ.Kind() == reflect.Bool:
		msg += "; write true or false"
	case n.Tag == "!!bool" && en.typ.Kind() == reflect.Struct && slices.Contains(yamlFields(en.typ), "enabled"):
		msg += "; write {enabled: " + n.Value + "}"
	case n.Kind == yaml.ScalarNode && en.typ.Kind() == reflect.Struct:
		msg += "; put its fields on the lines below it, indented"
	case n.Kind == yaml.MappingNode && en.typ.Kind() == reflect.Slice && en.typ.Elem().Kind() == reflect.Struct:
		msg += "; start each item with \"- \""
	}
	return msg
}

// shape describes the values a field of type t takes.
func shape(t reflect.Type) string {
	switch t {
	case durationType:
		return "a duration like 10s or 1m30s"
	case sizeType:
		return "a size like 128MiB"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return shape(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "a list of strings (e.g. [a, b])"
		}
		return "a list, each item " + shape(t.Elem())
	case reflect.Map:
		return "a mapping of names to " + shape(t.Elem())
	case reflect.Struct:
		fields := yamlFields(t)
		if len(fields) > 6 {
			fields = append(fields[:6], "...")
		}
		return "a mapping (" + strings.Join(fields, ", ") + ")"
	}
	return "a " + t.String()
}

// foundValue describes the node. A scalar's value is quoted only where it
// cannot be a secret: not for a secret field, nor where a mapping of
// fields was expected (`sasl: hunter2`).
func foundValue(en yamlEntry) string {
	n := en.node
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	}
	noun := map[string]string{"!!str": "string", "!!int": "number", "!!float": "number",
		"!!bool": "boolean", "!!timestamp": "timestamp"}[n.Tag]
	switch {
	case n.Tag == "!!null":
		return "nothing (null)"
	case noun == "":
		noun = "value"
	}
	switch {
	case secretPath(en.path):
		return "a " + noun + " (not shown: the field holds a secret)"
	case en.typ.Kind() == reflect.Struct || en.typ.Kind() == reflect.Map:
		return "a " + noun
	}
	v := n.Value
	if len(v) > maxShownYAML {
		v = strings.ToValidUTF8(v[:maxShownYAML], "") + "..."
	}
	if n.Tag == "!!str" {
		return "the string " + strconv.Quote(v)
	}
	return "the " + noun + " " + v
}

// secretNames are the last parts of the secret fields' paths.
var secretNames = []string{"password", "access_key_id", "secret_access_key", "session_token",
	"bearer_token", "webhook_url", "token", "tokens", "client_secret", "key_pem"}

func secretPath(path string) bool {
	last := path[strings.LastIndexByte(path, '.')+1:]
	if i := strings.IndexByte(last, '['); i >= 0 {
		last = last[:i]
	}
	return slices.Contains(secretNames, last)
}

// unknownField says a key is not a field of t and names the closest one.
func unknownField(name string, t reflect.Type) string {
	fields := yamlFields(t)
	closest, dist := "", len(name)
	for _, f := range fields {
		if d := editDistance(name, f); d < dist {
			closest, dist = f, d
		}
	}
	msg := "no such field"
	if closest != "" && dist <= max(2, len(name)/3) {
		msg += "; did you mean " + closest + "?"
	}
	return msg + " (the fields here: " + strings.Join(fields, ", ") + ")"
}

// yamlError is an explained YAML error; it wraps yaml.v3's.
type yamlError struct {
	msg string
	err error
}

func (e *yamlError) Error() string { return e.msg }
func (e *yamlError) Unwrap() error { return e.err }

// yamlFileError is Load's error for a configuration file yaml.v3 refused:
// one line per problem, with the file's line and the field.
func yamlFileError(path string, data []byte, err error) error {
	var lines []string
	for _, p := range explainYAML(data, err, reflect.TypeOf(Config{}), "") {
		if p.Line > 0 {
			lines = append(lines, fmt.Sprintf("config %s line %d: %s", path, p.Line, p))
		} else {
			lines = append(lines, fmt.Sprintf("config %s: %s", path, p))
		}
	}
	return &yamlError{msg: strings.Join(lines, "\n"), err: err}
}

// yamlValueError explains an environment variable's YAML value of type t
// for the field at path (FLOE_TABLES): its problems joined, with fields
// and without lines (the value is usually one line of JSON).
func yamlValueError(raw string, err error, t reflect.Type, path string) error {
	var parts []string
	for _, p := range explainYAML([]byte(raw), err, t, path) {
		parts = append(parts, p.String())
	}
	return &yamlError{msg: strings.Join(parts, "; "), err: err}
}
