package admin

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/floe-io/floe/internal/status"
)

// pageData is what every console page's view has: the page frame.
type pageData interface{ setCSS(template.CSS) }

// page is the frame of every console page.
type page struct {
	Title string
	CSS   template.CSS
	// CSRF is the session's form token; Admin shows the action forms;
	// Who names the session's caller; Auth shows the logout button.
	CSRF  string
	Admin bool
	Who   string
	Auth  bool
	// Refresh reloads the page every so many seconds (0: never), so an
	// open overview stays current without script.
	Refresh int
}

func (p *page) setCSS(css template.CSS) { p.CSS = css }

func (c *console) page(title string, sess consoleSession) page {
	return page{Title: title, CSRF: sess.csrf, Admin: sess.admin(), Who: sess.who, Auth: c.s.tokens.Enabled()}
}

type loginView struct {
	page
	Error string
}

type messageView struct {
	page
	Message string
	Detail  string
	// Back links to the page the message is about ("" for none).
	Back string
}

// tableRow is one table of the report with its freshness chart.
type tableRow struct {
	status.TableReport
	Chart chart
	Cost  costEstimate // console_cost.go
}

type overviewView struct {
	page
	Rep    status.Report
	Tables []tableRow
	// Query and State filter the tables (by a part of the name, by
	// state); Total is how many there are before the filter, Matched how
	// many pass it. The page lists matches From..To (1-based); Prev and
	// Next link the neighbouring pages ("" at either end).
	Query, State   string
	States         []string
	Total, Matched int
	From, To       int
	Prev, Next     string
}

type tableView struct {
	page
	Rep    status.Report
	T      tableRow
	Charts []axisChart  // lag, throughput, freshness (console_axis.go)
	Layout *TableLayout // nil when it could not be read (LayoutErr)
	// DeadLetters are the dead-letter table's newest rows, read for
	// admins only (values may hold data a read token must not see).
	DeadLetters    []DeadLetter
	DeadLetterErr  string
	LayoutErr      string
	Snapshots      []SnapshotInfo
	SnapshotsTotal int
	SnapshotErr    string
}

// consoleDeadLetters is how many dead letters the table page shows (the
// newest).
const consoleDeadLetters = 20

// consoleSnapshots is how many snapshots the table page lists (the newest).
const consoleSnapshots = 100

// consoleTablesPerPage is how many tables the overview lists at once: at a
// thousand tables the whole list is a page of megabytes that takes seconds
// to render (issue 38), so it pages through status.Select like /v1/status.
const consoleTablesPerPage = 100

// overviewRefreshSec is how often an open overview reloads itself.
const overviewRefreshSec = 30

func (c *console) overview(w http.ResponseWriter, r *http.Request, sess consoleSession) {
	rep, err := c.b.ClusterReport(r.Context()) // the same figures on every node
	if err != nil {
		c.fail(w, sess, fmt.Errorf("building the status report: %w", err))
		return
	}
	sel, err := status.ParseSelection(r.URL.Query())
	if err != nil {
		c.render(w, http.StatusBadRequest, "message", &messageView{page: c.page("Bad request", sess), Message: err.Error()})
		return
	}
	if sel.Limit == 0 || sel.Limit > consoleTablesPerPage {
		sel.Limit = consoleTablesPerPage
	}
	page := status.Select(rep, sel)
	v := &overviewView{page: c.page("Floe "+rep.Node, sess), Rep: rep, Total: len(rep.Tables),
		Query: sel.Query, State: sel.State, Matched: page.Summary.Matched, From: sel.Offset + 1,
		States: []string{status.StateFailed, status.StateSuspended, status.StateDegraded, status.StateConfigIssue,
			status.StateRunning, status.StatePending, status.StateUnmapped}}
	v.Refresh = overviewRefreshSec
	for _, t := range page.Tables {
		v.Tables = append(v.Tables, c.row(t, rep.GeneratedAt))
	}
	v.To = sel.Offset + len(v.Tables)
	link := func(off int) string {
		q := url.Values{}
		for k, val := range map[string]string{"q": sel.Query, "state": sel.State} {
			if val != "" {
				q.Set(k, val)
			}
		}
		if off > 0 {
			q.Set("offset", strconv.Itoa(off))
		}
		if sel.Limit != consoleTablesPerPage {
			q.Set("limit", strconv.Itoa(sel.Limit))
		}
		if len(q) == 0 {
			return "/ui/"
		}
		return "/ui/?" + q.Encode()
	}
	if sel.Offset > 0 {
		v.Prev = link(max(0, sel.Offset-sel.Limit))
	}
	if v.To < v.Matched {
		v.Next = link(v.To)
	}
	c.render(w, http.StatusOK, "overview", v)
}

func (c *console) tablePage(w http.ResponseWriter, r *http.Request, sess consoleSession) {
	name := r.PathValue("table")
	rep, err := c.b.ClusterReport(r.Context()) // the same figures on every node
	if err != nil {
		c.fail(w, sess, fmt.Errorf("building the status report: %w", err))
		return
	}
	i := slices.IndexFunc(rep.Tables, func(t status.TableReport) bool { return t.Table == name })
	if i < 0 {
		c.render(w, http.StatusNotFound, "message", &messageView{page: c.page("Not found", sess), Message: "No table " + name + " on this node.", Back: "/ui/"})
		return
	}
	v := &tableView{page: c.page(name, sess), Rep: rep, T: c.row(rep.Tables[i], rep.GeneratedAt),
		Charts: tableCharts(c.b.Samples(name), rep.GeneratedAt)}
	snaps, err := c.b.Snapshots(r.Context(), name)
	if err != nil {
		v.SnapshotErr = err.Error()
	}
	if sess.admin() {
		if v.DeadLetters, err = c.b.DeadLetters(r.Context(), name, consoleDeadLetters); err != nil {
			v.DeadLetterErr = err.Error()
		}
	}
	if l, err := c.b.TableLayout(r.Context(), name); err != nil {
		v.LayoutErr = err.Error()
	} else {
		v.Layout = &l
	}
	v.SnapshotsTotal = len(snaps)
	for j := len(snaps) - 1; j >= 0 && len(v.Snapshots) < consoleSnapshots; j-- {
		v.Snapshots = append(v.Snapshots, snaps[j]) // newest first
	}
	c.render(w, http.StatusOK, "table", v)
}

// row pairs a table's report with its chart, which ends at the report's
// own freshness so the chart and the number beside it agree.
func (c *console) row(t status.TableReport, now time.Time) tableRow {
	hist := c.b.Samples(t.Table)
	if t.FreshnessSec > 0 {
		hist = append(hist, status.Sample{At: now, FreshnessSec: t.FreshnessSec})
	}
	return tableRow{TableReport: t, Chart: freshnessChart(hist, now), Cost: estimateCost(t)}
}

func (c *console) fail(w http.ResponseWriter, sess consoleSession, err error) {
	c.s.log.Warn("console", "err", err)
	c.render(w, http.StatusInternalServerError, "message", &messageView{page: c.page("Error", sess), Message: err.Error()})
}

// consoleFuncs are the templates' formatting helpers.
var consoleFuncs = template.FuncMap{
	"bytes": humanBytes,
	"dur":   humanDur,
	"since": func(t, now time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return humanDur(now.Sub(t).Seconds()) + " ago"
	},
	"utc": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	},
	// stamp is a time as exact as /v1/status gives it, for data-v.
	"stamp": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	},
	"lower": strings.ToLower,
	"sub":   func(a, b int) int { return a - b },
	// sev is the colour class of a table state's text: info (grey) on a
	// healthy table, warn (amber) while it retries, crit (red) when it
	// stopped or failed.
	"sev": severity,
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

func humanDur(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	switch {
	case d <= 0:
		return "0s"
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// severity maps a table state to the colour of the text that explains it.
func severity(state string) string {
	switch state {
	case status.StateFailed, status.StateSuspended:
		return "crit"
	case status.StateDegraded, status.StateConfigIssue:
		return "warn"
	}
	return "info"
}
