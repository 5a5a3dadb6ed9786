package admin

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/floe-io/floe/internal/config"
)

// The console's mappings pages: list every mapping, create, edit and
// delete those made through the API (a configuration file's are shown read
// only), through the same Backend methods as the API, whose validation
// errors are shown beside the field they name.

type mappingsView struct {
	page
	Mappings []Mapping
	Err      string
}

// mappingForm is the create/edit form: its values as typed, and the
// error of each field the backend named (Errors[""] for the rest).
type mappingForm struct {
	page
	Create bool
	Name   string
	F      map[string]string
	Errors map[string]string
	// Formats are the table formats the form offers.
	Formats, ErrorModes, DataFormats []string
}

// fieldErrRE finds the field a validation error names: "mapping.format: ..."
// or "mapping.partition_by[0].transform: ...".
var fieldErrRE = regexp.MustCompile(`mapping\.([a-z_]+)`)

func (c *console) mappingsPage(w http.ResponseWriter, r *http.Request, sess consoleSession) {
	v := &mappingsView{page: c.page("Mappings", sess)}
	ms, err := c.b.Mappings(r.Context())
	if err != nil {
		v.Err = err.Error()
	}
	slices.SortFunc(ms, func(a, b Mapping) int { return strings.Compare(a.Name, b.Name) })
	v.Mappings = ms
	c.render(w, http.StatusOK, "mappings", v)
}

func (c *console) newForm(sess consoleSession, create bool, name string, f map[string]string) *mappingForm {
	title := "New mapping"
	if !create {
		title = "Mapping " + name
	}
	return &mappingForm{page: c.page(title, sess), Create: create, Name: name, F: f, Errors: map[string]string{},
		Formats: []string{config.FormatIceberg, "delta"}, ErrorModes: []string{"log", "skip", "suspend"},
		DataFormats: []string{"json", "raw", "avro", "protobuf", "json_schema", "latest"}}
}

// mappingEdit shows the form: empty to create, filled from the mapping to
// edit.
func (c *console) mappingEdit(w http.ResponseWriter, r *http.Request, sess consoleSession) {
	if !sess.admin() {
		c.refuse(w, r, http.StatusForbidden, errConsoleScope)
		return
	}
	name := r.PathValue("name")
	if name == "" {
		c.render(w, http.StatusOK, "mappingform", c.newForm(sess, true, "", map[string]string{"format": "json", "error_mode": "log", "formats_iceberg": "on"}))
		return
	}
	ms, err := c.b.Mappings(r.Context())
	if err != nil {
		c.fail(w, sess, err)
		return
	}
	i := slices.IndexFunc(ms, func(m Mapping) bool { return m.Name == name })
	if i < 0 {
		c.render(w, http.StatusNotFound, "message", &messageView{page: c.page("Not found", sess), Message: "No mapping " + name + ".", Back: "/ui/mappings"})
		return
	}
	c.render(w, http.StatusOK, "mappingform", c.newForm(sess, false, name, formOf(ms[i].Table)))
}

// mappingSave creates (POST /ui/mappings) or replaces (POST
// /ui/mappings/{name}) a mapping; a refusal shows the form again with the
// error beside its field.
func (c *console) mappingSave(w http.ResponseWriter, r *http.Request, sess consoleSession) {
	if !sess.admin() {
		c.refuse(w, r, http.StatusForbidden, errConsoleScope)
		return
	}
	name, create := r.PathValue("name"), false
	if name == "" {
		name, create = strings.TrimSpace(r.PostFormValue("name")), true
	}
	f := map[string]string{}
	for k := range r.PostForm {
		if k != "csrf" && k != "name" {
			f[k] = r.PostFormValue(k)
		}
	}
	t, ferr := tableOfForm(f)
	err := ferr
	var res WriteResult
	if err == nil {
		res, err = c.b.PutMapping(WithCaller(r.Context(), sess.who), Mapping{Name: name, Table: t}, create)
	}
	if err != nil {
		form := c.newForm(sess, create, name, f)
		field := ""
		if m := fieldErrRE.FindStringSubmatch(err.Error()); m != nil {
			field = m[1]
		}
		form.Errors[field] = err.Error()
		code := http.StatusBadRequest
		if ferr == nil {
			code = runtime.HTTPStatusFromCode(grpcstatus.Code(apiError(err)))
		}
		c.render(w, code, "mappingform", form)
		return
	}
	c.render(w, http.StatusOK, "message", &messageView{page: c.page("Mapping "+name, sess), Message: res.Message + ".", Back: "/ui/mappings"})
}

// mappingDelete deletes a mapping after a confirmation.
func (c *console) mappingDelete(w http.ResponseWriter, r *http.Request, sess consoleSession) {
	if !sess.admin() {
		c.refuse(w, r, http.StatusForbidden, errConsoleScope)
		return
	}
	name := r.PathValue("name")
	if r.PostFormValue("confirm") != "yes" {
		c.render(w, http.StatusOK, "mappingdelete", &mappingForm{page: c.page("Delete mapping "+name, sess), Name: name})
		return
	}
	res, err := c.b.DeleteMapping(WithCaller(r.Context(), sess.who), name)
	if err != nil {
		code := runtime.HTTPStatusFromCode(grpcstatus.Code(apiError(err)))
		c.render(w, code, "message", &messageView{page: c.page("Mapping "+name, sess), Message: "deleting mapping " + name + " failed: " + err.Error(), Back: "/ui/mappings"})
		return
	}
	c.render(w, http.StatusOK, "message", &messageView{page: c.page("Mapping "+name, sess), Message: res.Message + ". The table's data stays readable.", Back: "/ui/mappings"})
}

// formOf fills the form from a mapping.
func formOf(t config.Table) map[string]string {
	f := map[string]string{"topic": t.Topic, "topic_regex": t.TopicRegex, "namespace": t.Namespace, "table": t.Name,
		"format": t.Format, "subject": t.Subject, "error_mode": t.ErrorMode, "dead_letter_topic": t.DeadLetterTopic,
		"mode": t.Mode, "key": strings.Join(t.Key, ", "), "start_offset": t.StartOffset}
	var parts []string
	for _, p := range t.PartitionBy {
		parts = append(parts, p.Transform+"("+p.Column+")")
	}
	f["partition_by"] = strings.Join(parts, ", ")
	for _, fm := range t.Formats {
		f["formats_"+fm] = "on"
	}
	if len(t.Formats) == 0 {
		f["formats_iceberg"] = "on"
	}
	return f
}

// partRE is one partition_by entry: transform(column).
var partRE = regexp.MustCompile(`^\s*([a-z]+(?:\[\d+\])?)\s*\(\s*([^()\s]+)\s*\)\s*$`)

// errPartitionForm: the form's partition_by is not transform(column), ....
var errPartitionForm = errors.New("mapping.partition_by: write transform(column), separated by commas, e.g. day(_kafka_timestamp), bucket[8](_kafka_key)")

// tableOfForm reads the form into a mapping's table; the backend
// validates the rest.
func tableOfForm(f map[string]string) (config.Table, error) {
	t := config.Table{Topic: strings.TrimSpace(f["topic"]), TopicRegex: strings.TrimSpace(f["topic_regex"]),
		Namespace: strings.TrimSpace(f["namespace"]), Name: strings.TrimSpace(f["table"]), Format: f["format"],
		Subject: strings.TrimSpace(f["subject"]), ErrorMode: f["error_mode"], DeadLetterTopic: strings.TrimSpace(f["dead_letter_topic"]),
		Mode: f["mode"], StartOffset: f["start_offset"]}
	for _, k := range strings.Split(f["key"], ",") {
		if k = strings.TrimSpace(k); k != "" {
			t.Key = append(t.Key, k)
		}
	}
	for _, fm := range []string{config.FormatIceberg, "delta"} {
		if f["formats_"+fm] == "on" {
			t.Formats = append(t.Formats, fm)
		}
	}
	if p := strings.TrimSpace(f["partition_by"]); p != "" {
		for _, part := range splitTop(p) {
			m := partRE.FindStringSubmatch(part)
			if m == nil {
				return config.Table{}, fmt.Errorf("%w (not %q)", errPartitionForm, strings.TrimSpace(part))
			}
			t.PartitionBy = append(t.PartitionBy, config.PartitionField{Transform: m[1], Column: m[2]})
		}
	}
	return t, nil
}

// splitTop splits s at the commas outside parentheses and brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
