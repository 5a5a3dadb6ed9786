package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/wait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// hook is a webhook server that records the texts posted; fail answers
// the first few requests with an error status.
type hook struct {
	srv *httptest.Server

	mu       sync.Mutex
	texts    []string
	requests int
	fail     []int // statuses for the first requests
	got      chan string
}

func newHook(t *testing.T, fail ...int) *hook {
	h := &hook{fail: fail, got: make(chan string, 100)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.requests++
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || r.URL.Path != "/services/T0/B0/secret" {
			t.Errorf("request %s %s %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		if len(h.fail) > 0 {
			code := h.fail[0]
			h.fail = h.fail[1:]
			http.Error(w, "no", code)
			return
		}
		var body struct {
			Text string `json:"text"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("body: %v", err)
		}
		h.texts = append(h.texts, body.Text)
		h.got <- body.Text
		io.WriteString(w, "ok")
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) url() string { return h.srv.URL + "/services/T0/B0/secret" }

func (h *hook) snapshot() ([]string, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.texts...), h.requests
}

type source struct {
	mu    sync.Mutex
	rep   status.Report
	err   error
	reads int // Report calls
}

func (s *source) Report(ctx context.Context) (status.Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	rep := s.rep
	rep.Tables = slices.Clone(rep.Tables) // set edits in place
	return rep, s.err
}

func (s *source) set(f func(*status.Report)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.rep)
}

func report(node, leader string, tables ...status.TableReport) status.Report {
	return status.Report{Node: node, Leader: leader, Tables: tables}
}

func newTest(t *testing.T, h *hook, src Source, logs *bytes.Buffer) *Notifier {
	t.Helper()
	var w io.Writer = io.Discard
	if logs != nil {
		w = logs
	}
	n := New(Config{URL: h.url(), Interval: time.Hour, Client: h.srv.Client(),
		Log: slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))}, src)
	n.minBackoff, n.maxBackoff = time.Millisecond, 4*time.Millisecond
	t.Cleanup(h.srv.Client().CloseIdleConnections)
	return n
}

func TestStateChangeOneMessage(t *testing.T) {
	h := newHook(t)
	src := &source{rep: report("n1", "n2", status.TableReport{Table: "db.orders", State: "RUNNING", Committer: "n1"})}
	n := newTest(t, h, src, nil)
	ctx := context.Background()

	n.poll(ctx) // first sight, RUNNING: nothing
	n.poll(ctx)
	if texts, reqs := h.snapshot(); reqs != 0 {
		t.Fatalf("first sight of a running table posted %q", texts)
	}

	src.set(func(r *status.Report) {
		r.Tables[0].State, r.Tables[0].Reason = "DEGRADED", "catalog unreachable"
	})
	n.poll(ctx)
	n.poll(ctx) // the same report again: nothing more
	n.poll(ctx)
	texts, reqs := h.snapshot()
	want := ":warning: floe table db.orders is DEGRADED (was RUNNING): catalog unreachable (node n1)"
	if reqs != 1 || len(texts) != 1 || texts[0] != want {
		t.Fatalf("posted %q (%d requests), want exactly %q", texts, reqs, want)
	}

	src.set(func(r *status.Report) { r.Tables[0].State, r.Tables[0].Reason = "RUNNING", "" })
	n.poll(ctx)
	n.poll(ctx)
	texts, reqs = h.snapshot()
	if reqs != 2 || texts[1] != ":white_check_mark: floe table db.orders is RUNNING again (was DEGRADED) (node n1)" {
		t.Fatalf("posted %q (%d requests)", texts, reqs)
	}
}

func TestFirstSightAndStart(t *testing.T) {
	h := newHook(t)
	src := &source{rep: report("n1", "n1",
		status.TableReport{Table: "db.a", State: "PENDING"},                         // no committer: the leader's
		status.TableReport{Table: "db.b", State: "SUSPENDED", Reason: "bad record"}, // first sight, not fine
		status.TableReport{Table: "db.c", State: ""},                                // empty is PENDING
	)}
	n := newTest(t, h, src, nil)
	n.poll(context.Background())
	src.set(func(r *status.Report) { r.Tables[0].State, r.Tables[2].State = "RUNNING", "RUNNING" })
	n.poll(context.Background())
	texts, _ := h.snapshot()
	if len(texts) != 1 || texts[0] != ":warning: floe table db.b is SUSPENDED: bad record (node n1)" {
		t.Fatalf("posted %q", texts)
	}
}

func TestOtherCommitterSilent(t *testing.T) {
	h := newHook(t)
	src := &source{rep: report("n1", "n1",
		status.TableReport{Table: "db.orders", State: "RUNNING", Committer: "n2"},
	)}
	n := newTest(t, h, src, nil)
	n.poll(context.Background())
	src.set(func(r *status.Report) { r.Tables[0].State = "FAILED" })
	n.poll(context.Background())
	// A follower does not speak for a table with no committer either.
	src.set(func(r *status.Report) {
		r.Leader = "n3"
		r.Tables = append(r.Tables, status.TableReport{Table: "db.new", State: "CONFIG_ISSUE"})
	})
	n.poll(context.Background())
	if texts, reqs := h.snapshot(); reqs != 0 {
		t.Fatalf("posted %q for tables another node speaks for", texts)
	}
}

func TestRetryThenDelivered(t *testing.T) {
	h := newHook(t, http.StatusInternalServerError)
	src := &source{rep: report("n1", "n1", status.TableReport{Table: "db.orders", State: "RUNNING", Committer: "n1"})}
	var logs bytes.Buffer
	n := newTest(t, h, src, &logs)
	n.poll(context.Background())
	src.set(func(r *status.Report) { r.Tables[0].State = "DEGRADED" })
	n.poll(context.Background())
	n.poll(context.Background())
	texts, reqs := h.snapshot()
	if reqs != 2 || len(texts) != 1 || texts[0] != ":warning: floe table db.orders is DEGRADED (was RUNNING) (node n1)" {
		t.Fatalf("posted %q in %d requests, want one message in 2", texts, reqs)
	}
	if strings.Contains(logs.String(), "secret") {
		t.Errorf("the log shows the webhook's path:\n%s", logs.String())
	}
}

func TestGiveUpAfterMaxTries(t *testing.T) {
	h := newHook(t, 503, 429, 500, 502, 500, 500)
	src := &source{rep: report("n1", "n1", status.TableReport{Table: "db.orders", State: "FAILED", Committer: "n1"})}
	var logs bytes.Buffer
	n := newTest(t, h, src, &logs)
	n.poll(context.Background())
	if _, reqs := h.snapshot(); reqs != MaxTries {
		t.Fatalf("%d requests, want %d", reqs, MaxTries)
	}
	out := logs.String()
	if !strings.Contains(out, "message dropped") || !strings.Contains(out, h.srv.URL) || strings.Contains(out, "secret") {
		t.Errorf("log:\n%s", out)
	}
	// A 4xx other than 429 is not retried.
	h2 := newHook(t, http.StatusNotFound)
	n2 := newTest(t, h2, src, nil)
	n2.poll(context.Background())
	if _, reqs := h2.snapshot(); reqs != 1 {
		t.Errorf("404 tried %d times, want once", reqs)
	}
}

func TestNetworkErrorLogHidesPath(t *testing.T) {
	h := newHook(t)
	src := &source{rep: report("n1", "n1", status.TableReport{Table: "db.orders", State: "FAILED", Committer: "n1"})}
	var logs bytes.Buffer
	n := newTest(t, h, src, &logs)
	h.srv.Close() // connection refused
	n.poll(context.Background())
	out := logs.String()
	if !strings.Contains(out, "message dropped") || strings.Contains(out, "secret") {
		t.Errorf("log:\n%s", out)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	h := newHook(t)
	src := &source{rep: report("n1", "n1", status.TableReport{Table: "db.orders", State: "RUNNING", Committer: "n1"})}
	n := newTest(t, h, src, nil)
	n.cfg.Interval = 5 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()

	// Run has seen the table RUNNING once it has read a report.
	wait.For(t, 5*time.Second, "Run's first report", func() bool {
		src.mu.Lock()
		defer src.mu.Unlock()
		return src.reads > 0
	})
	src.set(func(r *status.Report) { r.Tables[0].State = "DEGRADED" })
	select {
	case got := <-h.got:
		if !strings.Contains(got, "is DEGRADED (was RUNNING)") {
			t.Errorf("posted %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no message from Run")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if _, reqs := h.snapshot(); reqs != 1 {
		t.Errorf("%d requests, want 1", reqs)
	}
}

// Cancelling while a message is being retried stops Run promptly.
func TestCancelDuringRetry(t *testing.T) {
	h := newHook(t, 500, 500, 500, 500, 500)
	src := &source{rep: report("n1", "n1", status.TableReport{Table: "db.orders", State: "FAILED", Committer: "n1"})}
	n := newTest(t, h, src, nil)
	n.minBackoff, n.maxBackoff = time.Hour, time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	wait.For(t, 5*time.Second, "the first attempt", func() bool {
		_, reqs := h.snapshot()
		return reqs > 0
	})
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel during a retry wait")
	}
}

func TestReportErrorAndNoURL(t *testing.T) {
	h := newHook(t)
	src := &source{err: errors.New("not ready")}
	n := newTest(t, h, src, nil)
	n.poll(context.Background())
	if _, reqs := h.snapshot(); reqs != 0 {
		t.Errorf("%d requests on a report error", reqs)
	}
	done := make(chan struct{})
	go func() { New(Config{}, src).Run(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("Run without a URL does not return")
	}
}

func TestCommitterMoves(t *testing.T) {
	h := newHook(t)
	src := &source{rep: report("n1", "n1", status.TableReport{Table: "db.orders", State: "DEGRADED", Committer: "n2"})}
	n := newTest(t, h, src, nil)
	n.poll(context.Background())
	src.set(func(r *status.Report) { r.Tables[0].Committer = "n1"; r.Tables[0].State = "RUNNING" })
	n.poll(context.Background()) // first sight as the committer, RUNNING: nothing
	if texts, _ := h.snapshot(); len(texts) != 0 {
		t.Fatalf("posted %q", texts)
	}
	src.set(func(r *status.Report) { r.Tables[0].Committer = "n3" })
	n.poll(context.Background())
	src.set(func(r *status.Report) { r.Tables[0].Committer = "n1"; r.Tables[0].State = "SUSPENDED" })
	n.poll(context.Background())
	if texts, _ := h.snapshot(); len(texts) != 1 || texts[0] != ":warning: floe table db.orders is SUSPENDED (node n1)" {
		t.Fatalf("posted %q", texts)
	}
}
