package admin

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/status"
)

// consoleBackend is the API tests' fakeBackend with a report of the test's
// choosing, freshness samples, and the caller of each rewind recorded.
type consoleBackend struct {
	*fakeBackend
	rep     status.Report
	hist    []status.Sample
	rewinds []string // Caller of each RewindTable
}

func (b *consoleBackend) ClusterReport(ctx context.Context) (status.Report, error) {
	return b.Report(ctx)
}

func (b *consoleBackend) Report(context.Context) (status.Report, error) { return b.rep, nil }
func (b *consoleBackend) Samples(string) []status.Sample                { return b.hist }
func (b *consoleBackend) RewindTable(ctx context.Context, req RewindRequest) (RewindResult, error) {
	b.mu.Lock()
	b.rewinds = append(b.rewinds, Caller(ctx))
	b.mu.Unlock()
	return b.fakeBackend.RewindTable(ctx, req)
}

func (b *consoleBackend) callCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.calls)
}

// consoleReport is a report with every number the overview shows set to a
// distinct value, and a hostile reason.
func consoleReport(reason string) status.Report {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	return status.Report{Node: "n1", Leader: "n1", RaftState: "Leader", GeneratedAt: at,
		Members: []status.MemberReport{
			{ID: "n1", Role: "leader", Zone: "eu-1a", Version: "1.4.0", Healthy: true, Partitions: 3, Committers: 1},
			{ID: "n2", Role: "voter", Zone: "eu-1b", Version: "1.4.1", Healthy: false, Partitions: 2, Unreachable: 12},
		},
		Brokers: []status.BrokerStatus{
			{Addr: "b1:9092", NodeID: 1, Up: true, LastResponse: at.Add(-300 * time.Millisecond), Partitions: 2},
			{Addr: "b2:9092", NodeID: 2, Up: false, Since: at.Add(-40 * time.Second), LastResponse: at.Add(-50 * time.Second), Reason: reason, Partitions: 1},
		},
		Tables: []status.TableReport{
			{Table: "db.orders", State: status.StateDegraded, Reason: reason, Rows: 123456, DataFiles: 17, AvgFileBytes: 3 << 20,
				DataBytes: 51 << 20, DeadLetterRows: 9, Lag: 1234, LagSec: 61.5, FreshnessSec: 75.25,
				LastCommit: at.Add(-90*time.Second - 250*time.Millisecond), MetadataBytesWritten: 3 << 20,
				Partitions:     []status.PartitionReport{{Topic: "orders", Partition: 0, Committed: 21, Lag: 1234, LagSec: 61.5, LastError: reason}},
				Catalogs:       []status.CatalogReport{{Catalog: "glue", InSync: false, LagSec: 30, LastError: reason}},
				SuspendedAt:    &status.SuspendedRecord{Topic: "orders", Partition: 0, Offset: 7, Error: reason},
				ObjectRequests: status.ObjectRequests{Put: 4321, Get: 98, List: 7, Delete: 2},
				Activity: status.Activity{DeadLettered: 4, LastCompaction: at.Add(-time.Hour),
					LastDeadLetters: []status.SuspendedRecord{{Topic: "orders", Partition: 1, Offset: 42, Error: reason}}}},
			{Table: "db.clicks", State: status.StateRunning, Rows: 99, DataFiles: 2, AvgFileBytes: 100, Lag: 0, FreshnessSec: 2},
		}}
}

// consoleClient is a browser: it keeps cookies and does not follow
// redirects, so a test sees each answer.
func consoleClient(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := httpClient(t)
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// send makes a request with c and returns the answer and its body.
func send(t *testing.T, c *http.Client, method, u string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// login logs c in with token and fails the test unless it is accepted.
func login(t *testing.T, c *http.Client, base, token string) {
	t.Helper()
	resp, body := send(t, c, http.MethodPost, base+"/ui/login", url.Values{"token": {token}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/" {
		t.Fatalf("login answered %s (%s): %s", resp.Status, resp.Header.Get("Location"), body)
	}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrfOf reads the CSRF token from a page's forms.
func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", page)
	}
	return m[1]
}

// startConsole serves b with the test tokens and returns the base URL.
func startConsole(t *testing.T, b Backend, opts Options) string {
	t.Helper()
	return "http://" + startAPI(t, b, opts).Addr()
}
