package admin

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/floe-io/floe/internal/config"
)

// TestConsoleMappings: the mappings page lists every mapping; an admin
// creates, edits and deletes API mappings through the same backend calls
// as the API, and a refusal is shown beside the field it names.
func TestConsoleMappings(t *testing.T) {
	f := &fakeBackend{}
	b := &consoleBackend{fakeBackend: f, rep: consoleReport("")}
	base := startConsole(t, b, Options{Tokens: testTokens(t)})

	reader := consoleClient(t)
	login(t, reader, base, readToken)
	_, list := send(t, reader, http.MethodGet, base+"/ui/mappings", nil)
	if !strings.Contains(list, `<tr data-mapping="orders">`) || strings.Contains(list, "/ui/mappings/orders/edit") {
		t.Errorf("a read session sees the list without edit links:\n%s", list)
	}
	if resp, _ := send(t, reader, http.MethodGet, base+"/ui/mappings/new", nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a read session's new-mapping form: %s, want 403", resp.Status)
	}

	c := consoleClient(t)
	login(t, c, base, adminToken)
	_, list = send(t, c, http.MethodGet, base+"/ui/mappings", nil)
	csrf := csrfOf(t, list)
	_, edit := send(t, c, http.MethodGet, base+"/ui/mappings/orders/edit", nil)
	if !strings.Contains(edit, `name="topic" value="orders"`) || !strings.Contains(edit, `action="/ui/mappings/orders"`) {
		t.Errorf("the edit form is not filled from the mapping:\n%s", edit)
	}
	form := url.Values{"csrf": {csrf}, "name": {"clicks"}, "topic": {"clicks"}, "namespace": {"web"}, "format": {"json"},
		"error_mode": {"log"}, "partition_by": {"day(_kafka_timestamp), bucket[8](_kafka_key)"}, "formats_iceberg": {"on"}, "formats_delta": {"on"}}
	resp, page := send(t, c, http.MethodPost, base+"/ui/mappings", form)
	if resp.StatusCode != http.StatusOK || f.lastCall() != "PutMapping clicks true" {
		t.Fatalf("create: %s, last call %q:\n%s", resp.Status, f.lastCall(), page)
	}
	want := config.Table{Topic: "clicks", Namespace: "web", Format: "json", ErrorMode: "log", Formats: []string{"iceberg", "delta"},
		PartitionBy: []config.PartitionField{{Column: "_kafka_timestamp", Transform: "day"}, {Column: "_kafka_key", Transform: "bucket[8]"}}}
	if got := f.mapping.Table; got.Topic != want.Topic || got.Namespace != want.Namespace || !slices.Equal(got.Formats, want.Formats) ||
		!slices.Equal(got.PartitionBy, want.PartitionBy) {
		t.Errorf("created %+v, want %+v", got, want)
	}

	form.Set("partition_by", "by day")
	resp, page = send(t, c, http.MethodPost, base+"/ui/mappings", form)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, `placeholder="day(_kafka_timestamp), bucket[8](_kafka_key)" size="50"><div class="reason sev-crit field-error">mapping.partition_by:`) {
		t.Errorf("a bad partition_by: %s, its error not beside the field:\n%s", resp.Status, page)
	}
	form.Set("partition_by", "")
	f.err = fmt.Errorf("%w: mapping.format: unknown format \"xml\"", ErrInvalid)
	resp, page = send(t, c, http.MethodPost, base+"/ui/mappings/orders", form)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, `</select> subject <input name="subject" value="" placeholder="registry formats"><div class="reason sev-crit field-error">invalid`) {
		t.Errorf("the backend's refusal: %s, not beside the format field:\n%s", resp.Status, page)
	}
	f.err = nil

	_, confirm := send(t, c, http.MethodPost, base+"/ui/mappings/orders/delete", url.Values{"csrf": {csrf}})
	if !strings.Contains(confirm, "Yes, delete mapping orders") || strings.HasPrefix(f.lastCall(), "DeleteMapping") {
		t.Fatalf("delete without confirmation: last call %q", f.lastCall())
	}
	send(t, c, http.MethodPost, base+"/ui/mappings/orders/delete", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
	if f.lastCall() != "DeleteMapping orders" {
		t.Errorf("confirmed delete: last call %q", f.lastCall())
	}
}
