package metrics

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/floe-io/floe/internal/status"
)

// Source gives the node's status report; the node implements it (as it
// does admin's). It must be safe for concurrent use: concurrent scrapes call
// it concurrently.
type Source interface {
	Report(ctx context.Context) (status.Report, error)
}

// ReportTimeout bounds how long a scrape waits for the report.
const ReportTimeout = 4 * time.Second

// Metric family names. Every floe_* family the package exposes is here and
// in Names.
const (
	RecordsConsumed      = "floe_records_consumed_total"
	BytesConsumed        = "floe_bytes_consumed_total"
	RecordsSkipped       = "floe_records_skipped_total"
	RecordsDeadLettered  = "floe_records_dead_lettered_total"
	FilesWritten         = "floe_files_written_total"
	BytesWritten         = "floe_bytes_written_total"
	Commits              = "floe_commits_total"
	CommitFailures       = "floe_commit_failures_total"
	CommitDuration       = "floe_commit_duration_seconds"
	TableFreshness       = "floe_table_freshness_seconds"
	ConsumerLagRecords   = "floe_consumer_lag_records"
	ConsumerLagSeconds   = "floe_consumer_lag_seconds"
	LedgerPendingEntries = "floe_ledger_pending_entries"
	LedgerPendingBytes   = "floe_ledger_pending_bytes"
	TableState           = "floe_table_state"
	Compactions          = "floe_compactions_total"
	SnapshotsExpired     = "floe_snapshots_expired_total"
	OrphanFilesDeleted   = "floe_orphan_files_deleted_total"
	FilesRewritten       = "floe_files_rewritten_total"
	BytesRewritten       = "floe_bytes_rewritten_total"
	CatalogSyncLag       = "floe_catalog_sync_lag_seconds"
	CatalogSyncFailures  = "floe_catalog_sync_failures_total"
	CatalogInSync        = "floe_catalog_in_sync"
	RaftState            = "floe_raft_state"
	RaftIsLeader         = "floe_raft_is_leader"
	RaftAppliedIndex     = "floe_raft_applied_index"
	RaftLeaderChanges    = "floe_raft_leader_changes_total"
	RaftApplyDuration    = "floe_raft_apply_duration_seconds"
	ClusterMembers       = "floe_cluster_members"
	MemberUp             = "floe_member_up"
	ObjectRequests       = "floe_object_requests_total"
	MetadataBytesWritten = "floe_metadata_bytes_written_total"
	NodeInfo             = "floe_node_info"
	MemoryBudgetBytes    = "floe_memory_budget_bytes"
	ScrapeError          = "floe_scrape_error"
	UpsertKeys           = "floe_upsert_keys"
	UpsertDeleteFiles    = "floe_upsert_delete_files_total"
	UpsertDeletedRows    = "floe_upsert_deleted_rows_total"
	UpsertIndexRebuilds  = "floe_upsert_index_rebuilds_total"
	UpsertRebuildSeconds = "floe_upsert_index_rebuild_seconds_total"
	UpsertIndexBytes     = "floe_upsert_index_file_bytes"
)

// Names returns every floe_* metric family name the package exposes, sorted.
// Histograms are listed by family name; their series carry the suffixes
// _bucket, _sum and _count.
func Names() []string {
	return []string{
		BytesConsumed, BytesRewritten, BytesWritten, CatalogInSync, CatalogSyncFailures, CatalogSyncLag,
		ClusterMembers, CommitDuration, CommitFailures, Commits, Compactions,
		ConsumerLagRecords, ConsumerLagSeconds, FilesRewritten, FilesWritten,
		KafkaBrokerResponseAge, KafkaBrokerUp, LedgerPendingBytes, LedgerPendingEntries, MemberUp, MemoryBudgetBytes, MetadataBytesWritten, NodeInfo, ObjectRequests, OrphanFilesDeleted,
		RaftAppliedIndex, RaftApplyDuration, RaftIsLeader, RaftLeaderChanges, RaftState,
		RecordsConsumed, RecordsDeadLettered, RecordsSkipped, ScrapeError,
		SnapshotsExpired, TableFetchAge, TableFreshness, TableState,
		UpsertDeleteFiles, UpsertDeletedRows, UpsertIndexBytes, UpsertRebuildSeconds, UpsertIndexRebuilds, UpsertKeys,
	}
}

// TableStates are the states floe_table_state has a series for (one-hot).
var TableStates = []string{"PENDING", "RUNNING", "DEGRADED", "CONFIG_ISSUE", "SUSPENDED", "FAILED", "UNMAPPED"}

// RaftStates are the values of floe_raft_state's state label.
var RaftStates = []string{"leader", "follower", "candidate", "shutdown"}

// Histogram buckets, in seconds.
var (
	CommitBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	ApplyBuckets  = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
)

// Metrics is a node's Prometheus registry: the report collector, the
// recorded events, and the Go and process collectors. It is safe for
// concurrent use.
type Metrics struct {
	reg           *prometheus.Registry
	commit        *prometheus.HistogramVec
	apply         prometheus.Histogram
	leaderChanges prometheus.Counter
}

// New makes the metrics of a node whose report comes from src; version is
// shown in floe_node_info.
func New(src Source, version string) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		commit: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    CommitDuration,
			Help:    "Time this node took to commit a batch to a table's catalog, successful commits only.",
			Buckets: CommitBuckets,
		}, []string{"table"}),
		apply: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    RaftApplyDuration,
			Help:    "Time from proposing a Raft command to its being applied.",
			Buckets: ApplyBuckets,
		}),
		leaderChanges: prometheus.NewCounter(prometheus.CounterOpts{
			Name: RaftLeaderChanges,
			Help: "Raft leader changes this node observed since it started.",
		}),
	}
	m.reg.MustRegister(
		newReportCollector(src, version, ReportTimeout),
		m.commit, m.apply, m.leaderChanges,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Handler serves the registry in the Prometheus exposition formats. A
// collector error is logged in the body's place of the series it concerns;
// the rest of the scrape is still served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          m.reg, // promhttp_metric_handler_errors_total
		EnableOpenMetrics: false,
	})
}

// Registry is the private registry, for tests and for callers that gather
// directly.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Recorder is the part of Metrics that records events as they happen, for
// the code that commits and applies (which should not depend on the
// registry). Nop does nothing.
type Recorder interface {
	ObserveCommit(table string, d time.Duration)
	ObserveApply(d time.Duration)
	LeaderChanged()
}

var _ Recorder = (*Metrics)(nil)

// Nop is a Recorder that records nothing, for nodes without metrics and for
// tests.
var Nop Recorder = nop{}

type nop struct{}

func (nop) ObserveCommit(string, time.Duration) {}
func (nop) ObserveApply(time.Duration)          {}
func (nop) LeaderChanged()                      {}

// ObserveCommit records that this node committed to table in d.
func (m *Metrics) ObserveCommit(table string, d time.Duration) {
	m.commit.WithLabelValues(table).Observe(d.Seconds())
}

// ObserveApply records how long a Raft command took from proposal to being
// applied.
func (m *Metrics) ObserveApply(d time.Duration) { m.apply.Observe(d.Seconds()) }

// LeaderChanged records that the Raft leader changed.
func (m *Metrics) LeaderChanged() { m.leaderChanges.Inc() }

// ---------------------------------------------------------------- report collector

type reportCollector struct {
	src     Source
	version string
	timeout time.Duration

	mu   sync.Mutex
	node string // from the last good report, for floe_node_info when a report fails

	perTable                                           []*prometheus.Desc // tableSeries' descriptions, in order
	lagRecords, lagSeconds, tableState, objectRequests *prometheus.Desc
	catLag, catFailures, catInSync                     *prometheus.Desc
	raftState, isLeader, applied                       *prometheus.Desc
	members, memberUp, info, scrapeErr                 *prometheus.Desc
	memory                                             *prometheus.Desc
	// An upsert table's counters, reported only for upsert tables.
	upKeys, upDelFiles, upDelRows, upRebuilds, upRebuildS, upIndexBytes *prometheus.Desc
	source                                                              sourceDescs // source.go
}

// tableSeries are the metrics that carry only the table label, each one
// value of the table's report: one row names, describes and reads each.
var tableSeries = []struct {
	name, help string
	kind       prometheus.ValueType
	value      func(status.TableReport) float64
}{
	{RecordsConsumed, "Records this node consumed from Kafka for the table since it started.", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.Consumed) }},
	{BytesConsumed, "Bytes of records this node consumed for the table since it started.", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.BytesConsumed) }},
	{RecordsSkipped, "Records this node skipped (error mode skip) since it started.", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.Skipped) }},
	{RecordsDeadLettered, "Records this node sent to the table's dead-letter table since it started.", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.DeadLettered) }},
	{FilesWritten, "Data files this node wrote for the table since it started.", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.FilesWritten) }},
	{BytesWritten, "Bytes of data files this node wrote for the table since it started.", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.BytesWritten) }},
	{Commits, "Catalog commits this node made to the table since it started.", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.NodeCommits) }},
	{CommitFailures, "Failed catalog commits of this node to the table since it started.", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.CommitFailures) }},
	{Compactions, "Compactions this node ran on the table since it started.", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.Compactions) }},
	{SnapshotsExpired, "Snapshots this node expired from the table since it started.", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.SnapshotsExpired) }},
	{OrphanFilesDeleted, "Orphan files this node deleted from the table's location since it started.", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.OrphansDeleted) }},
	{FilesRewritten, "Data files this node rewrote by compaction since it started.", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.FilesRewritten) }},
	{BytesRewritten, "Bytes of data files this node read and rewrote by compaction since it started (the compaction share of the cost).", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.BytesRewritten) }},
	{MetadataBytesWritten, "Bytes of metadata files (metadata.json, manifest lists, manifests) this node uploaded for the table since it started (s3:// warehouses).", prometheus.CounterValue, func(r status.TableReport) float64 { return float64(r.MetadataBytesWritten) }},
	{TableFreshness, "Now minus the timestamp of the newest committed record of the table.", prometheus.GaugeValue, func(r status.TableReport) float64 { return r.FreshnessSec }},
	{LedgerPendingEntries, "Ledger entries recorded but not yet committed to the table.", prometheus.GaugeValue, func(r status.TableReport) float64 { return float64(r.PendingEntries) }},
	{LedgerPendingBytes, "Bytes of data recorded in the ledger but not yet committed to the table.", prometheus.GaugeValue, func(r status.TableReport) float64 { return float64(r.PendingBytes) }},
}

func newReportCollector(src Source, version string, timeout time.Duration) *reportCollector {
	table := []string{"table"}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	c := &reportCollector{
		src: src, version: version, timeout: timeout,
		lagRecords:     d(ConsumerLagRecords, "Records in the partition not yet committed to the table.", "table", "topic", "partition"),
		lagSeconds:     d(ConsumerLagSeconds, "How far behind in time the partition's committed position is (0 when caught up).", "table", "topic", "partition"),
		tableState:     d(TableState, "1 for the table's current state on this node, 0 for the other states.", "table", "state"),
		objectRequests: d(ObjectRequests, "Object store requests this node made for the table's objects (s3:// warehouses), by S3 billing class: put, get, list, delete.", "table", "kind"),
		catLag:         d(CatalogSyncLag, "How long the external catalog has been behind the table (0 when in sync).", "table", "catalog"),
		catFailures:    d(CatalogSyncFailures, "Failed syncs of the table to the external catalog (known on the table's committer).", "table", "catalog"),
		catInSync:      d(CatalogInSync, "1 if the external catalog points at the table's current metadata.", "table", "catalog"),
		raftState:      d(RaftState, "1 for this node's Raft state, 0 for the others.", "state"),
		isLeader:       d(RaftIsLeader, "1 if this node is the Raft leader."),
		applied:        d(RaftAppliedIndex, "The last Raft log index this node applied."),
		members:        d(ClusterMembers, "Members of the Raft group by health (health is judged by the leader).", "health"),
		memberUp:       d(MemberUp, "1 if the member is healthy (as judged by the leader; other nodes report every member up).", "member"),
		info:           d(NodeInfo, "Always 1: the node's ID and Floe version.", "node", "version"),
		scrapeErr:      d(ScrapeError, "1 if the node's status report could not be had for this scrape."),
		memory:         d(MemoryBudgetBytes, "The node's memory budget: bytes of records held (fetched, not yet recorded in the ledger) and the limit they are held to.", "state"),
		upKeys:         d(UpsertKeys, "Live keys in the key index of the upsert table, on its committer.", "table"),
		upDelFiles:     d(UpsertDeleteFiles, "Position-delete files this node committed to the upsert table since it started.", "table"),
		upDelRows:      d(UpsertDeletedRows, "Rows those position-delete files delete.", "table"),
		upRebuilds:     d(UpsertIndexRebuilds, "Rebuilds of the upsert table's key index from the table on this node since it started.", "table"),
		upRebuildS:     d(UpsertRebuildSeconds, "Time those rebuilds took.", "table"),
		upIndexBytes:   d(UpsertIndexBytes, "Size on disk of the key-index file of the upsert table's committer (shared by the upsert tables that node commits).", "table"),
	}
	for _, m := range tableSeries {
		c.perTable = append(c.perTable, d(m.name, m.help, table...))
	}
	c.source = newSourceDescs()
	return c
}

func (c *reportCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.perTable {
		ch <- d
	}
	for _, d := range []*prometheus.Desc{
		c.lagRecords, c.lagSeconds, c.tableState, c.objectRequests,
		c.upKeys, c.upDelFiles, c.upDelRows, c.upRebuilds, c.upRebuildS, c.upIndexBytes,
		c.catLag, c.catFailures, c.catInSync,
		c.raftState, c.isLeader, c.applied,
		c.members, c.memberUp, c.info, c.scrapeErr, c.memory,
	} {
		ch <- d
	}
	c.source.describe(ch)
}

func (c *reportCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	rep, err := c.report(ctx)
	if err != nil {
		ch <- constMetric(c.scrapeErr, prometheus.GaugeValue, 1)
		c.mu.Lock()
		node := c.node
		c.mu.Unlock()
		if node != "" {
			ch <- constMetric(c.info, prometheus.GaugeValue, 1, node, c.version)
		}
		return
	}
	c.mu.Lock()
	c.node = rep.Node
	c.mu.Unlock()
	ch <- constMetric(c.scrapeErr, prometheus.GaugeValue, 0)
	ch <- constMetric(c.info, prometheus.GaugeValue, 1, rep.Node, c.version)
	c.collectRaft(ch, rep)
	c.source.collect(ch, rep)
	if m := rep.Memory; m != nil {
		ch <- constMetric(c.memory, prometheus.GaugeValue, float64(m.HeldBytes), "held")
		ch <- constMetric(c.memory, prometheus.GaugeValue, float64(m.LimitBytes), "limit")
	}
	seen := map[string]bool{}
	for _, t := range rep.Tables {
		if seen[t.Table] {
			continue // a duplicate would fail the whole family
		}
		seen[t.Table] = true
		c.collectTable(ch, rep, t)
	}
}

// report calls the source, giving up when ctx ends even if the source does
// not watch it (the call then finishes in the background).
func (c *reportCollector) report(ctx context.Context) (status.Report, error) {
	type result struct {
		rep status.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: panicError{r}}
			}
		}()
		rep, err := c.src.Report(ctx)
		done <- result{rep, err}
	}()
	select {
	case r := <-done:
		return r.rep, r.err
	case <-ctx.Done():
		return status.Report{}, ctx.Err()
	}
}

type panicError struct{ v any }

func (p panicError) Error() string { return "metrics: report source panicked" }

func (c *reportCollector) collectRaft(ch chan<- prometheus.Metric, rep status.Report) {
	state := strings.ToLower(rep.RaftState)
	for _, s := range RaftStates {
		ch <- constMetric(c.raftState, prometheus.GaugeValue, b2f(s == state), s)
	}
	ch <- constMetric(c.isLeader, prometheus.GaugeValue, b2f(state == "leader"))
	ch <- constMetric(c.applied, prometheus.GaugeValue, float64(rep.AppliedIndex))
	var healthy, unhealthy float64
	seen := map[string]bool{}
	for _, m := range rep.Members {
		if seen[m.ID] {
			continue
		}
		seen[m.ID] = true
		if m.Healthy {
			healthy++
		} else {
			unhealthy++
		}
		ch <- constMetric(c.memberUp, prometheus.GaugeValue, b2f(m.Healthy), m.ID)
	}
	ch <- constMetric(c.members, prometheus.GaugeValue, healthy, "healthy")
	ch <- constMetric(c.members, prometheus.GaugeValue, unhealthy, "unhealthy")
}

func (c *reportCollector) collectTable(ch chan<- prometheus.Metric, rep status.Report, t status.TableReport) {
	for i, m := range tableSeries {
		ch <- constMetric(c.perTable[i], m.kind, m.value(t), t.Table)
	}
	for kind, v := range map[string]int64{"put": t.ObjectRequests.Put, "get": t.ObjectRequests.Get, "list": t.ObjectRequests.List, "delete": t.ObjectRequests.Delete} {
		ch <- constMetric(c.objectRequests, prometheus.CounterValue, float64(v), t.Table, kind)
	}
	if u := t.Upsert; u != nil {
		for _, m := range []struct {
			d *prometheus.Desc
			k prometheus.ValueType
			v float64
		}{
			{c.upKeys, prometheus.GaugeValue, float64(u.Keys)},
			{c.upDelFiles, prometheus.CounterValue, float64(u.DeleteFiles)},
			{c.upDelRows, prometheus.CounterValue, float64(u.DeletedRows)},
			{c.upRebuilds, prometheus.CounterValue, float64(u.IndexRebuilds)},
			{c.upRebuildS, prometheus.CounterValue, u.RebuildSeconds},
			{c.upIndexBytes, prometheus.GaugeValue, float64(u.IndexFileBytes)},
		} {
			ch <- constMetric(m.d, m.k, m.v, t.Table)
		}
	}

	known := false
	for _, s := range TableStates {
		known = known || s == t.State
		ch <- constMetric(c.tableState, prometheus.GaugeValue, b2f(s == t.State), t.Table, s)
	}
	if !known && t.State != "" {
		ch <- constMetric(c.tableState, prometheus.GaugeValue, 1, t.Table, t.State)
	}

	// Every node reports every partition of the table; the one it is
	// assigned to exposes its lag (the leader, if it is unassigned), so
	// that sums over the fleet count each partition once.
	seen := map[string]bool{}
	for _, p := range t.Partitions {
		if p.Node != rep.Node && (p.Node != "" || rep.Node != rep.Leader) {
			continue
		}
		part := strconv.FormatInt(int64(p.Partition), 10)
		if k := p.Topic + "\x00" + part; seen[k] {
			continue
		} else {
			seen[k] = true
		}
		ch <- constMetric(c.lagRecords, prometheus.GaugeValue, float64(p.Lag), t.Table, p.Topic, part)
		ch <- constMetric(c.lagSeconds, prometheus.GaugeValue, p.LagSec, t.Table, p.Topic, part)
	}

	seenCat := map[string]bool{}
	for _, cr := range t.Catalogs {
		if seenCat[cr.Catalog] {
			continue
		}
		seenCat[cr.Catalog] = true
		ch <- constMetric(c.catLag, prometheus.GaugeValue, cr.LagSec, t.Table, cr.Catalog)
		ch <- constMetric(c.catFailures, prometheus.CounterValue, float64(cr.Failures), t.Table, cr.Catalog)
		ch <- constMetric(c.catInSync, prometheus.GaugeValue, b2f(cr.InSync), t.Table, cr.Catalog)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// constMetric is MustNewConstMetric that reports a bad label value (invalid
// UTF-8 in a name from the report) as a collection error instead of
// panicking in the scrape.
func constMetric(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) prometheus.Metric {
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return m
}
