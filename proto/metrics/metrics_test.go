package metrics

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/floe-io/floe/internal/status"
)

type fakeSource struct {
	mu    sync.Mutex
	rep   status.Report
	err   error
	calls int
}

func (f *fakeSource) Report(ctx context.Context) (status.Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.rep, f.err
}

func testReport() status.Report {
	return status.Report{
		Node: "n1", Leader: "n1", RaftState: "Leader", AppliedIndex: 4242,
		Memory:      &status.MemoryReport{HeldBytes: 3 << 20, LimitBytes: 48 << 20},
		GeneratedAt: time.Unix(1_000_000, 0),
		Brokers: []status.BrokerStatus{
			{Addr: "b1:9092", NodeID: 1, Up: true, LastResponse: time.Unix(1_000_000, 0).Add(-500 * time.Millisecond), Partitions: 1},
			{Addr: "b2:9092", NodeID: 2, Up: false, Since: time.Unix(1_000_000, 0).Add(-21 * time.Second), LastResponse: time.Unix(1_000_000, 0).Add(-31 * time.Second), Reason: "no answer for 31s", Partitions: 1},
		},
		Members: []status.MemberReport{
			{ID: "n1", Role: "leader", Healthy: true},
			{ID: "n2", Role: "voter", Healthy: true},
			{ID: "n3", Role: "voter", Healthy: false},
		},
		Tables: []status.TableReport{
			{
				Table: "db.orders", State: "RUNNING",
				Activity: status.Activity{Consumed: 1000, BytesConsumed: 64000, DeadLettered: 3, Skipped: 2,
					FilesWritten: 12, BytesWritten: 512000, CommitFailures: 1,
					Compactions: 2, SnapshotsExpired: 5, OrphansDeleted: 6, FilesRewritten: 9,
					Upsert: &status.UpsertStatus{Keys: 40, DeleteFiles: 3, DeletedRows: 17, IndexRebuilds: 1, RebuildSeconds: 0.25}},
				NodeCommits: 7, FreshnessSec: 12.5, PendingEntries: 4, PendingBytes: 2048, MetadataBytesWritten: 70123,
				Partitions: []status.PartitionReport{
					{Topic: "orders", Partition: 0, Lag: 10, LagSec: 1.5, Node: "n1", Leader: "b1:9092", FetchAgeSec: 0.5},
					{Topic: "orders", Partition: 1, Lag: 20, LagSec: 2.5, Node: "n1", Leader: "b2:9092", FetchAgeSec: 31},
					{Topic: "orders", Partition: 2, Lag: 30, LagSec: 3.5, Node: "n2"}, // another node's
					{Topic: "orders", Partition: 3, Lag: 40, LagSec: 4.5},             // unassigned: the leader's
				},
				Catalogs: []status.CatalogReport{
					{Catalog: "glue", LagSec: 0, InSync: true, Failures: 0},
					{Catalog: "rest", LagSec: 75, InSync: false, Failures: 4},
				},
			},
			{
				Table: "db.users", State: "DEGRADED",
				Activity: status.Activity{Consumed: 50}, NodeCommits: 1, FreshnessSec: 400,
				Partitions: []status.PartitionReport{
					{Topic: "users", Partition: 11, Lag: 5, LagSec: 0.25, Node: "n1"},
				},
			},
		},
	}
}

func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// find returns the series of name whose labels are exactly want.
func find(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		got := labelsOf(m)
		if len(got) != len(want) {
			continue
		}
		match := true
		for k, v := range want {
			if got[k] != v {
				match = false
			}
		}
		if match {
			return m
		}
	}
	return nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return -1
}

func expect(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string, want float64) {
	t.Helper()
	m := find(fams, name, labels)
	if m == nil {
		t.Errorf("%s%v: missing", name, labels)
		return
	}
	if got := value(m); got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

func tbl(name string) map[string]string { return map[string]string{"table": name} }

func TestReportSeries(t *testing.T) {
	src := &fakeSource{rep: testReport()}
	m := New(src, "v1.2.3")
	fams := scrape(t, m)

	expect(t, fams, ScrapeError, map[string]string{}, 0)
	expect(t, fams, NodeInfo, map[string]string{"node": "n1", "version": "v1.2.3"}, 1)

	o := tbl("db.orders")
	for name, want := range map[string]float64{
		RecordsConsumed: 1000, BytesConsumed: 64000, RecordsSkipped: 2, RecordsDeadLettered: 3,
		FilesWritten: 12, BytesWritten: 512000, Commits: 7, CommitFailures: 1,
		TableFreshness: 12.5, LedgerPendingEntries: 4, LedgerPendingBytes: 2048,
		Compactions: 2, SnapshotsExpired: 5, OrphanFilesDeleted: 6, FilesRewritten: 9,
		MetadataBytesWritten: 70123,
		UpsertKeys:           40, UpsertDeleteFiles: 3, UpsertDeletedRows: 17, UpsertIndexRebuilds: 1, UpsertRebuildSeconds: 0.25,
	} {
		expect(t, fams, name, o, want)
	}
	// An append table has no upsert series.
	if find(fams, UpsertKeys, tbl("db.users")) != nil {
		t.Errorf("%s for an append table", UpsertKeys)
	}
	expect(t, fams, RecordsConsumed, tbl("db.users"), 50)
	expect(t, fams, TableFreshness, tbl("db.users"), 400)
	if f := fams[RecordsConsumed]; f.GetType() != dto.MetricType_COUNTER {
		t.Errorf("%s is a %v, want a counter", RecordsConsumed, f.GetType())
	}
	if f := fams[TableFreshness]; f.GetType() != dto.MetricType_GAUGE {
		t.Errorf("%s is a %v, want a gauge", TableFreshness, f.GetType())
	}

	// Lag: the node's own partitions and (on the leader) unassigned ones.
	lag := func(table, topic, part string) map[string]string {
		return map[string]string{"table": table, "topic": topic, "partition": part}
	}
	expect(t, fams, ConsumerLagRecords, lag("db.orders", "orders", "0"), 10)
	expect(t, fams, ConsumerLagRecords, lag("db.orders", "orders", "1"), 20)
	expect(t, fams, ConsumerLagRecords, lag("db.orders", "orders", "3"), 40)
	expect(t, fams, ConsumerLagSeconds, lag("db.orders", "orders", "1"), 2.5)
	expect(t, fams, ConsumerLagRecords, lag("db.users", "users", "11"), 5)
	expect(t, fams, ConsumerLagSeconds, lag("db.users", "users", "11"), 0.25)
	if find(fams, ConsumerLagRecords, lag("db.orders", "orders", "2")) != nil {
		t.Errorf("lag of a partition assigned to another node is exposed")
	}
	if n := len(fams[ConsumerLagRecords].GetMetric()); n != 4 {
		t.Errorf("%d lag series, want 4", n)
	}

	// State one-hot.
	for _, s := range TableStates {
		want := 0.0
		if s == "RUNNING" {
			want = 1
		}
		expect(t, fams, TableState, map[string]string{"table": "db.orders", "state": s}, want)
		want = 0
		if s == "DEGRADED" {
			want = 1
		}
		expect(t, fams, TableState, map[string]string{"table": "db.users", "state": s}, want)
	}

	// Catalogs.
	cat := func(c string) map[string]string { return map[string]string{"table": "db.orders", "catalog": c} }
	expect(t, fams, CatalogSyncLag, cat("rest"), 75)
	expect(t, fams, CatalogSyncFailures, cat("rest"), 4)
	expect(t, fams, CatalogInSync, cat("rest"), 0)
	expect(t, fams, CatalogInSync, cat("glue"), 1)
	expect(t, fams, CatalogSyncLag, cat("glue"), 0)

	// Raft and members.
	for _, s := range RaftStates {
		want := 0.0
		if s == "leader" {
			want = 1
		}
		expect(t, fams, RaftState, map[string]string{"state": s}, want)
	}
	expect(t, fams, RaftIsLeader, map[string]string{}, 1)
	expect(t, fams, RaftAppliedIndex, map[string]string{}, 4242)
	expect(t, fams, MemoryBudgetBytes, map[string]string{"state": "held"}, 3<<20)
	expect(t, fams, MemoryBudgetBytes, map[string]string{"state": "limit"}, 48<<20)
	expect(t, fams, ClusterMembers, map[string]string{"health": "healthy"}, 2)
	expect(t, fams, ClusterMembers, map[string]string{"health": "unhealthy"}, 1)
	expect(t, fams, MemberUp, map[string]string{"member": "n1"}, 1)
	expect(t, fams, MemberUp, map[string]string{"member": "n3"}, 0)

	// The Go and process collectors are registered.
	if fams["go_goroutines"] == nil {
		t.Errorf("go_goroutines missing")
	}
}

func TestFollowerView(t *testing.T) {
	rep := testReport()
	rep.Node, rep.RaftState = "n2", "Follower"
	m := New(&fakeSource{rep: rep}, "dev")
	fams := scrape(t, m)
	expect(t, fams, RaftIsLeader, map[string]string{}, 0)
	expect(t, fams, RaftState, map[string]string{"state": "follower"}, 1)
	expect(t, fams, RaftState, map[string]string{"state": "leader"}, 0)
	lag := func(part string) map[string]string {
		return map[string]string{"table": "db.orders", "topic": "orders", "partition": part}
	}
	expect(t, fams, ConsumerLagRecords, lag("2"), 30)
	for _, p := range []string{"0", "1", "3"} {
		if find(fams, ConsumerLagRecords, lag(p)) != nil {
			t.Errorf("follower n2 exposes lag of partition %s", p)
		}
	}
}

func TestUnknownStateAndDuplicates(t *testing.T) {
	rep := testReport()
	rep.Tables[1].State = "WEIRD"
	rep.Tables = append(rep.Tables, rep.Tables[0]) // duplicate table
	fams := scrape(t, New(&fakeSource{rep: rep}, "dev"))
	expect(t, fams, TableState, map[string]string{"table": "db.users", "state": "WEIRD"}, 1)
	expect(t, fams, TableState, map[string]string{"table": "db.users", "state": "RUNNING"}, 0)
	expect(t, fams, RecordsConsumed, tbl("db.orders"), 1000)
}

func TestHistograms(t *testing.T) {
	m := New(&fakeSource{rep: testReport()}, "dev")
	Nop.ObserveCommit("db.orders", time.Second) // records nothing anywhere
	var r Recorder = m
	r.ObserveCommit("db.orders", 30*time.Millisecond)
	m.ObserveCommit("db.orders", 2*time.Second)
	m.ObserveCommit("db.users", 40*time.Second)
	m.ObserveApply(700 * time.Microsecond)
	m.LeaderChanged()
	m.LeaderChanged()
	fams := scrape(t, m)

	h := find(fams, CommitDuration, tbl("db.orders"))
	if h == nil || h.Histogram == nil {
		t.Fatalf("%s{table=db.orders} missing", CommitDuration)
	}
	if got := h.Histogram.GetSampleCount(); got != 2 {
		t.Errorf("commit count %d, want 2", got)
	}
	if got := h.Histogram.GetSampleSum(); got < 2.029 || got > 2.031 {
		t.Errorf("commit sum %v, want 2.03", got)
	}
	var bounds []float64
	for _, b := range h.Histogram.GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
		switch b.GetUpperBound() {
		case .025:
			if b.GetCumulativeCount() != 0 {
				t.Errorf("bucket .025 = %d, want 0", b.GetCumulativeCount())
			}
		case .05, 1:
			if b.GetCumulativeCount() != 1 {
				t.Errorf("bucket %v = %d, want 1", b.GetUpperBound(), b.GetCumulativeCount())
			}
		case 2.5, 30:
			if b.GetCumulativeCount() != 2 {
				t.Errorf("bucket %v = %d, want 2", b.GetUpperBound(), b.GetCumulativeCount())
			}
		}
	}
	if !slices.Equal(bounds, append(slices.Clone(CommitBuckets), math.Inf(1))) {
		t.Errorf("commit buckets %v, want %v", bounds, CommitBuckets)
	}
	if u := find(fams, CommitDuration, tbl("db.users")); u == nil || u.Histogram.GetSampleCount() != 1 {
		t.Errorf("db.users commit histogram: %v", u)
	}
	a := find(fams, RaftApplyDuration, map[string]string{})
	if a == nil || a.Histogram.GetSampleCount() != 1 {
		t.Fatalf("apply histogram: %v", a)
	}
	for _, b := range a.Histogram.GetBucket() {
		if b.GetUpperBound() == .0005 && b.GetCumulativeCount() != 0 || b.GetUpperBound() == .001 && b.GetCumulativeCount() != 1 {
			t.Errorf("apply bucket %v = %d", b.GetUpperBound(), b.GetCumulativeCount())
		}
	}
	if len(a.Histogram.GetBucket()) != len(ApplyBuckets)+1 { // and +Inf
		t.Errorf("apply has %d buckets, want %d", len(a.Histogram.GetBucket()), len(ApplyBuckets)+1)
	}
	expect(t, fams, RaftLeaderChanges, map[string]string{}, 2)
}

func TestSourceError(t *testing.T) {
	src := &fakeSource{rep: testReport()}
	m := New(src, "dev")
	scrape(t, m) // a good one first: the node's name is remembered

	src.mu.Lock()
	src.err = errors.New("raft not ready")
	src.mu.Unlock()
	fams := scrape(t, m)
	expect(t, fams, ScrapeError, map[string]string{}, 1)
	expect(t, fams, NodeInfo, map[string]string{"node": "n1", "version": "dev"}, 1)
	for _, name := range []string{RecordsConsumed, TableState, ConsumerLagRecords, TableFreshness, RaftIsLeader} {
		if fams[name] != nil {
			t.Errorf("%s exposed although the report failed", name)
		}
	}
	// Recorded events are still there.
	expect(t, fams, RaftLeaderChanges, map[string]string{}, 0)
}

type blockingSource struct{ release chan struct{} }

func (b blockingSource) Report(ctx context.Context) (status.Report, error) {
	<-b.release // ignores ctx on purpose
	return status.Report{}, nil
}

type panickingSource struct{}

func (panickingSource) Report(context.Context) (status.Report, error) { panic("boom") }

func TestSourceTimeoutAndPanic(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	c := newReportCollector(blockingSource{release}, "dev", 50*time.Millisecond)
	m := New(panickingSource{}, "dev")
	fams := scrape(t, m)
	expect(t, fams, ScrapeError, map[string]string{}, 1)

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	if _, err := c.report(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("blocked source: err %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("a source that ignores ctx blocked the scrape for %v", time.Since(start))
	}
}

// TestSourceSeries: each broker's up and response age, and each table's
// fetch age by the broker leading its partitions.
func TestSourceSeries(t *testing.T) {
	fams := scrape(t, New(&fakeSource{rep: testReport()}, "dev"))
	expect(t, fams, KafkaBrokerUp, map[string]string{"broker": "b1:9092"}, 1)
	expect(t, fams, KafkaBrokerUp, map[string]string{"broker": "b2:9092"}, 0)
	expect(t, fams, KafkaBrokerResponseAge, map[string]string{"broker": "b1:9092"}, 0.5)
	expect(t, fams, KafkaBrokerResponseAge, map[string]string{"broker": "b2:9092"}, 31)
	expect(t, fams, TableFetchAge, map[string]string{"table": "db.orders", "broker": "b2:9092"}, 31)
	expect(t, fams, TableFetchAge, map[string]string{"table": "db.orders", "broker": "b1:9092"}, 0.5)
	if n := len(fams[TableFetchAge].GetMetric()); n != 2 {
		t.Errorf("%d fetch-age series, want 2 (partitions without a known leader have none)", n)
	}
}

func TestConcurrentScrapes(t *testing.T) {
	m := New(&fakeSource{rep: testReport()}, "dev")
	h := m.Handler()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				m.ObserveCommit("db.orders", time.Millisecond)
				m.ObserveApply(time.Millisecond)
				if i%2 == 0 {
					m.LeaderChanged()
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
				if rec.Code != 200 {
					t.Errorf("status %d", rec.Code)
				}
			}
		}()
	}
	wg.Wait()
	fams := scrape(t, m)
	if c := find(fams, CommitDuration, tbl("db.orders")).Histogram.GetSampleCount(); c != 160 {
		t.Errorf("commit count %d, want 160", c)
	}
	expect(t, fams, RaftLeaderChanges, map[string]string{}, 80)
}

// Every family the collector can expose is in Names, and every name is
// exposed by a full report.
func TestNames(t *testing.T) {
	names := Names()
	if !sort.StringsAreSorted(names) {
		t.Errorf("Names is not sorted")
	}
	m := New(&fakeSource{rep: testReport()}, "dev")
	m.ObserveCommit("db.orders", time.Millisecond)
	fams := scrape(t, m)
	for name := range fams {
		if strings.HasPrefix(name, "floe_") && !slices.Contains(names, name) {
			t.Errorf("%s is exposed but not in Names", name)
		}
	}
	for _, name := range names {
		if fams[name] == nil {
			t.Errorf("%s is in Names but not exposed", name)
		}
	}
}
