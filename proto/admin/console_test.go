package admin

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/status"
)

var (
	cellRE = regexp.MustCompile(`data-k="([a-z_]+)" data-v="([^"]*)"`)
	// overviewKeys are the report's fields the issue asks the overview to
	// show, by their /v1/status names; each must be in every table's row.
	overviewKeys = []string{"state", "rows", "lag", "lag_seconds", "freshness_seconds", "data_files", "avg_file_bytes", "last_commit", "last_compaction", "dead_letter_rows"}
	memberKeys   = []string{"role", "zone", "version", "healthy", "partitions", "committers"}
	brokerKeys   = []string{"up", "last_response", "partitions"}
	// externalURLRE finds a URL a page would load or go to: an attribute
	// value or a CSS url(). Text may show one (the catalog URL engines
	// connect to, an endpoint a reason quotes); a page never loads it.
	externalURLRE = regexp.MustCompile(`(?i)<[^>]*\s[a-z-]+\s*=\s*["']?https?://|url\(\s*["']?https?://`)
)

// rowCells returns the data-k/data-v cells of the element whose attr is
// name (a table row, a member row).
func rowCells(t *testing.T, page, attr, name string) map[string]string {
	t.Helper()
	re := regexp.MustCompile(`(?s)<tr ` + attr + `="` + regexp.QuoteMeta(name) + `">(.*?)</tr>`)
	m := re.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no row %s=%q in the page", attr, name)
	}
	cells := map[string]string{}
	for _, c := range cellRE.FindAllStringSubmatch(m[1], -1) {
		cells[c[1]] = html.UnescapeString(c[2])
	}
	return cells
}

// sameValue compares a cell with the JSON value of the same field.
func sameValue(cell string, js any) bool {
	switch v := js.(type) {
	case nil:
		return cell == "" || cell == "0"
	case float64:
		f, err := strconv.ParseFloat(cell, 64)
		return err == nil && f == v
	case bool:
		return cell == strconv.FormatBool(v)
	case string:
		if a, err := time.Parse(time.RFC3339Nano, v); err == nil {
			b, err := time.Parse(time.RFC3339Nano, cell)
			return err == nil && a.Equal(b)
		}
		return cell == v
	}
	return false
}

// TestConsoleOverviewMatchesStatus: every number the overview shows for a
// member or a table is the number GET /v1/status answers for the same
// state, and every field the issue names is shown.
func TestConsoleOverviewMatchesStatus(t *testing.T) {
	b := &consoleBackend{fakeBackend: &fakeBackend{}, rep: consoleReport("commit: storage unreachable")}
	base := startConsole(t, b, Options{Tokens: testTokens(t)})
	c := consoleClient(t)
	login(t, c, base, readToken)
	resp, page := send(t, c, http.MethodGet, base+"/ui/", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("overview answered %s", resp.Status)
	}
	code, _, raw := do(t, httpClient(t), http.MethodGet, base+"/v1/status", "", readToken)
	if code != http.StatusOK {
		t.Fatalf("/v1/status answered %d", code)
	}
	var rep struct {
		Members []map[string]any `json:"members"`
		Brokers []map[string]any `json:"brokers"`
		Tables  []map[string]any `json:"tables"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	check := func(attr, name string, keys []string, js map[string]any) {
		cells := rowCells(t, page, attr, name)
		for _, k := range keys {
			cell, ok := cells[k]
			if !ok {
				t.Errorf("%s %s: the overview does not show %s", attr, name, k)
				continue
			}
			if !sameValue(cell, js[k]) {
				t.Errorf("%s %s %s: overview %q, /v1/status %v", attr, name, k, cell, js[k])
			}
		}
	}
	for _, m := range rep.Members {
		check("data-member", m["id"].(string), memberKeys, m)
	}
	for _, tb := range rep.Tables {
		check("data-table", tb["table"].(string), overviewKeys, tb)
	}
	for _, br := range rep.Brokers {
		check("data-broker", br["addr"].(string), brokerKeys, br)
	}
	if !strings.Contains(page, "down, went down 40s ago") {
		t.Errorf("the overview does not say since when b2 is down")
	}
	if len(rep.Tables) != 2 || len(rep.Members) != 2 || len(rep.Brokers) != 2 {
		t.Fatalf("status has %d tables and %d members, want 2 and 2", len(rep.Tables), len(rep.Members))
	}
}

// TestConsoleEscapesReport: a reason from a record or a broker (here a
// script) is shown as text on every page that shows it.
func TestConsoleEscapesReport(t *testing.T) {
	const hostile = `<script>alert("x")</script><img src=x onerror=alert(1)>`
	b := &consoleBackend{fakeBackend: &fakeBackend{}, rep: consoleReport(hostile)}
	base := startConsole(t, b, Options{Tokens: testTokens(t)})
	c := consoleClient(t)
	login(t, c, base, adminToken)
	for _, path := range []string{"/ui/", "/ui/tables/db.orders"} {
		_, page := send(t, c, http.MethodGet, base+path, nil)
		if strings.Contains(page, "<script") || strings.Contains(page, "<img") {
			t.Errorf("%s carries the reason unescaped", path)
		}
		if !strings.Contains(page, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
			t.Errorf("%s does not show the reason as text", path)
		}
	}
	// The table page shows the cost counters and the last dead letters.
	_, page := send(t, c, http.MethodGet, base+"/ui/tables/db.orders", nil)
	for _, want := range []string{`data-k="object_requests_put" data-v="4321"`, "98 get",
		`<span data-k="cost_requests">$0.0217</span> of S3 requests`, `<span data-k="cost_storage">$0.0011</span> a month`, `data-k="metadata_bytes_written" data-v="3145728">3.0 MiB</span> of metadata`, "orders/1@42: &lt;script"} {
		if !strings.Contains(page, want) {
			t.Errorf("the table page lacks %q", want)
		}
	}
}

// TestConsoleNoExternalURL: no page the console serves refers to anything
// but itself (no CDN, no fonts, no SVG namespace URL): every one is
// grepped for http:// and https:// in attributes and CSS.
func TestConsoleNoExternalURL(t *testing.T) {
	b := &consoleBackend{fakeBackend: &fakeBackend{}, rep: consoleReport("commit: storage unreachable"),
		hist: []status.Sample{{At: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC), FreshnessSec: 40}}}
	base := startConsole(t, b, Options{Tokens: testTokens(t)})
	c := consoleClient(t)
	_, loginPage := send(t, c, http.MethodGet, base+"/ui/login", nil)
	_, refused := send(t, c, http.MethodPost, base+"/ui/login", url.Values{"token": {"wrong-token-0123456789"}})
	login(t, c, base, adminToken)
	_, overview := send(t, c, http.MethodGet, base+"/ui/", nil)
	_, table := send(t, c, http.MethodGet, base+"/ui/tables/db.orders", nil)
	csrf := csrfOf(t, table)
	_, confirm := send(t, c, http.MethodPost, base+"/ui/tables/db.orders/rewind", url.Values{"csrf": {csrf}, "to": {"earliest"}})
	_, result := send(t, c, http.MethodPost, base+"/ui/tables/db.orders/maintain", url.Values{"csrf": {csrf}})
	_, missing := send(t, c, http.MethodGet, base+"/ui/tables/db.nope", nil)
	for name, page := range map[string]string{"login": loginPage, "refused login": refused, "overview": overview,
		"table": table, "confirm": confirm, "result": result, "not found": missing} {
		if !strings.Contains(page, "</html>") {
			t.Errorf("%s: not a whole page", name)
		}
		if loc := externalURLRE.FindStringIndex(page); loc != nil {
			t.Errorf("%s refers to %q", name, page[loc[0]:min(len(page), loc[1]+40)])
		}
	}
	if !strings.Contains(overview, "<polyline") {
		t.Error("the overview draws no freshness chart")
	}
}

// TestFreshnessChart: the chart keeps the hour before the report and puts
// the largest freshness at the top.
func TestFreshnessChart(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(ago time.Duration, sec float64) status.Sample {
		return status.Sample{At: now.Add(-ago), FreshnessSec: sec}
	}
	for _, c := range []struct {
		name    string
		in      []status.Sample
		samples int
		maxSec  float64
		points  string
	}{
		{"none", nil, 0, 0, ""},
		{"older than an hour left out", []status.Sample{at(2*time.Hour, 500), at(30*time.Minute, 10), at(0, 20)}, 2, 20,
			fmt.Sprintf("60.0,%.1f 118.0,2.0", float64(chartH)/2)},
		{"from the future left out", []status.Sample{at(-time.Minute, 9), at(time.Hour, 4)}, 1, 4, "2.0,2.0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := freshnessChart(c.in, now)
			if ch.Samples != c.samples || ch.MaxSec != c.maxSec || ch.Points != c.points {
				t.Fatalf("chart %+v, want %d samples, max %v, points %q", ch, c.samples, c.maxSec, c.points)
			}
		})
	}
}

// TestConsoleWithoutAuth: with no token configured there is no login: the
// overview answers at once, and actions work with the session's CSRF token
// (recorded as anonymous, as the API records them).
func TestConsoleWithoutAuth(t *testing.T) {
	b := &consoleBackend{fakeBackend: &fakeBackend{}, rep: consoleReport("")}
	base := startConsole(t, b, Options{})
	c := consoleClient(t)
	resp, _ := send(t, c, http.MethodGet, base+"/ui/login", nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/" {
		t.Fatalf("login page without auth answered %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	resp, page := send(t, c, http.MethodGet, base+"/ui/tables/db.orders", nil)
	if resp.StatusCode != http.StatusOK || strings.Contains(page, "Log out") {
		t.Fatalf("table page answered %s (logout shown: %v)", resp.Status, strings.Contains(page, "Log out"))
	}
	resp, body := send(t, c, http.MethodPost, base+"/ui/tables/db.orders/pause", url.Values{"csrf": {csrfOf(t, page)}})
	if resp.StatusCode != http.StatusOK || b.lastCall() != "PauseTable db.orders" {
		t.Fatalf("pause answered %s, backend saw %q: %s", resp.Status, b.lastCall(), body)
	}
	if got := b.callers[len(b.callers)-1]; got != "anonymous" {
		t.Fatalf("pause recorded as %q, want anonymous", got)
	}
}

// TestConsoleTableLayout: the table page shows the mapping, the schema
// with field ids, types and when each field appeared, the partition spec
// and how to query the table, all from the backend's TableLayout.
func TestConsoleTableLayout(t *testing.T) {
	b := &consoleBackend{fakeBackend: &fakeBackend{}, rep: consoleReport("")}
	base := startConsole(t, b, Options{Tokens: testTokens(t)})
	c := consoleClient(t)
	login(t, c, base, readToken)
	_, page := send(t, c, http.MethodGet, base+"/ui/tables/db.orders", nil)
	for _, want := range []string{
		"<dt>Topic</dt><dd>orders</dd>", "<dt>Error mode</dt><dd>dlq</dd>", "<dt>Formats</dt><dd>iceberg, delta</dd>",
		`<tr data-field="9"><td>9</td><td class="mono">customer.region</td><td class="mono">string</td><td>no</td><td>schema 1, 2026-12-01T10:00:00Z</td></tr>`,
		"identity(customer.region) as region",
		"; Iceberg snapshot <span class=\"mono\">7</span> (format version 2)",
		"iceberg.rest-catalog.uri=https://floe-1:7422/iceberg",
		`SELECT count(*) FROM iceberg."db"."orders";`,
		"iceberg_scan('s3://wh/db/orders/metadata/00007.metadata.json')",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the table page lacks %q", want)
		}
	}
}

// TestConsoleFilter: the overview filters tables by a part of the name and
// by state, and says how many it shows of how many.
func TestConsoleFilter(t *testing.T) {
	b := &consoleBackend{fakeBackend: &fakeBackend{}, rep: consoleReport("commit: storage unreachable")}
	base := startConsole(t, b, Options{Tokens: testTokens(t)})
	c := consoleClient(t)
	login(t, c, base, readToken)
	for _, tc := range []struct {
		query      string
		want, gone []string
		shown      string
	}{
		{"", []string{`data-table="db.orders"`, `data-table="db.clicks"`}, nil, "1-2 of 2 matching, 2 tables"},
		{"?q=CLI", []string{`data-table="db.clicks"`}, []string{`data-table="db.orders"`}, "1-1 of 1 matching, 2 tables"},
		{"?state=degraded", []string{`data-table="db.orders"`}, []string{`data-table="db.clicks"`}, "1-1 of 1 matching, 2 tables"},
		{"?q=orders&state=RUNNING", nil, []string{`data-table="db.orders"`, `data-table="db.clicks"`}, "0 of 0 matching, 2 tables"},
	} {
		_, page := send(t, c, http.MethodGet, base+"/ui/"+tc.query, nil)
		for _, w := range tc.want {
			if !strings.Contains(page, w) {
				t.Errorf("%s: lacks %s", tc.query, w)
			}
		}
		for _, g := range tc.gone {
			if strings.Contains(page, g) {
				t.Errorf("%s: shows %s", tc.query, g)
			}
		}
		if !strings.Contains(page, tc.shown) {
			t.Errorf("%s: does not say %q", tc.query, tc.shown)
		}
	}
}

// TestTableCharts: lag, throughput (the rate of committed rows) and
// freshness over the hour, each with a time axis and a value axis in its
// unit rounded up to a round number.
func TestTableCharts(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s := func(ago time.Duration, fresh float64, rows, lag int64) status.Sample {
		return status.Sample{At: now.Add(-ago), FreshnessSec: fresh, Rows: rows, Lag: lag}
	}
	charts := tableCharts([]status.Sample{s(2*time.Hour, 9, 0, 900), s(30*time.Minute, 4, 1000, 30), s(0, 2, 2800, 10)}, now)
	if len(charts) != 3 {
		t.Fatalf("%d charts", len(charts))
	}
	lag, rate, fresh := charts[0], charts[1], charts[2]
	if lag.Samples != 2 || lag.YTicks[2].Label != "50" || lag.Latest != "10" {
		t.Errorf("lag chart %+v: the hour's 2 samples, top 50 (30 rounded up), now 10", lag)
	}
	if rate.Samples != 2 || rate.Latest != "1" || rate.YTicks[2].Label != "1" || rate.Unit != "rows/s" {
		t.Errorf("throughput chart %+v: 1800 rows in 30 min is 1 row/s", rate)
	}
	if fresh.Latest != "2s" || fresh.XTicks[0].Label != "-60m" || fresh.XTicks[4].Label != "now" {
		t.Errorf("freshness chart %+v", fresh)
	}
	if empty := tableCharts(nil, now); empty[0].Samples != 0 || empty[0].Points != "" || len(empty[0].YTicks) != 3 {
		t.Errorf("an empty chart %+v still needs its axes and no line", empty[0])
	}
}

// TestResultText: a command's result as text, in its own order, from a
// struct or from a peer's JSON.
func TestResultText(t *testing.T) {
	type res struct {
		Table          string `json:"table"`
		FilesRewritten int    `json:"files_rewritten"`
		BytesRewritten int64  `json:"bytes_rewritten"`
	}
	want := "table: db.orders\nfiles rewritten: 12\nbytes rewritten: 3.0 MiB (3145728 bytes)"
	if got := resultText(res{"db.orders", 12, 3 << 20}); got != want {
		t.Errorf("struct: %q, want %q", got, want)
	}
	peer := json.RawMessage(`{"table":"db.orders","files_rewritten":12,"bytes_rewritten":3145728}`)
	if got := resultText(peer); got != want {
		t.Errorf("peer JSON: %q, want %q", got, want)
	}
	if got := resultText(json.RawMessage(`[1,2]`)); got != "[1,2]" {
		t.Errorf("not an object: %q", got)
	}
}

// TestConsoleDeadLetters: the table page shows the dead-letter table's
// newest rows to an admin, and not to a read token.
func TestConsoleDeadLetters(t *testing.T) {
	b := &consoleBackend{fakeBackend: &fakeBackend{}, rep: consoleReport("")}
	base := startConsole(t, b, Options{Tokens: testTokens(t)})
	for token, shown := range map[string]bool{adminToken: true, readToken: false} {
		c := consoleClient(t)
		login(t, c, base, token)
		_, page := send(t, c, http.MethodGet, base+"/ui/tables/db.orders", nil)
		row := `<tr data-deadletter="orders/1@42"><td class="mono">orders/1@42</td>`
		if got := strings.Contains(page, row) && strings.Contains(page, "{&#34;broken&#34;:"); got != shown {
			t.Errorf("token %s: dead letter shown %v, want %v", token[:4], got, shown)
		}
	}
}

// TestConsolePages: at many tables the overview lists a page of them in
// name order with links to the neighbouring pages that keep the filter,
// and a malformed page parameter is refused naming it.
func TestConsolePages(t *testing.T) {
	rep := consoleReport("")
	rep.Tables = nil
	for i := range 250 {
		rep.Tables = append(rep.Tables, status.TableReport{Table: fmt.Sprintf("db.t%03d", i), State: status.StateRunning})
	}
	b := &consoleBackend{fakeBackend: &fakeBackend{}, rep: rep}
	base := startConsole(t, b, Options{Tokens: testTokens(t)})
	c := consoleClient(t)
	login(t, c, base, readToken)
	for _, tc := range []struct {
		query, first, last, shown, prev, next string
	}{
		{"", "db.t000", "db.t099", "1-100 of 250 matching, 250 tables", "", `/ui/?offset=100`},
		{"?offset=100", "db.t100", "db.t199", "101-200 of 250", `/ui/"`, `/ui/?offset=200`},
		{"?offset=200&amp;q=t2", "", "", "0 of 50 matching", `/ui/?offset=100&amp;q=t2"`, ""},
		{"?q=t2&offset=20", "db.t220", "db.t249", "21-50 of 50 matching", `/ui/?q=t2"`, ""},
		{"?state=running&limit=10", "db.t000", "db.t009", "1-10 of 250", "", `/ui/?limit=10&amp;offset=10&amp;state=RUNNING`},
	} {
		_, page := send(t, c, http.MethodGet, base+"/ui/"+strings.ReplaceAll(tc.query, "&amp;", "&"), nil)
		want := []string{tc.shown}
		if tc.first != "" {
			want = append(want, `data-table="`+tc.first+`"`, `data-table="`+tc.last+`"`)
		} else if strings.Contains(page, `<tr data-table="`) { // an offset past the matches
			t.Errorf("%s: lists tables past the end", tc.query)
		}
		for _, w := range want {
			if !strings.Contains(page, w) {
				t.Errorf("%s: lacks %s", tc.query, w)
			}
		}
		if n := strings.Count(page, `<tr data-table="`); n > consoleTablesPerPage {
			t.Errorf("%s: lists %d tables, a page is %d", tc.query, n, consoleTablesPerPage)
		}
		for rel, href := range map[string]string{"prev": tc.prev, "next": tc.next} {
			has := strings.Contains(page, `rel="`+rel+`"`)
			if href == "" && has || href != "" && !strings.Contains(page, `href="`+href) {
				t.Errorf("%s: %s link wrong (want %q)", tc.query, rel, href)
			}
		}
	}
	resp, page := send(t, c, http.MethodGet, base+"/ui/?offset=-3", nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "offset") {
		t.Errorf("a negative offset: %s, %q", resp.Status, page)
	}
}
