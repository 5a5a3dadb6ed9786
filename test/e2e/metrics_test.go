package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/testing/testnode"
)

// TestMetricsAfterRun runs the pipeline, then scrapes /metrics without a
// token (tokens are configured), parses it with Prometheus' text parser and
// checks each named series against what was produced.
func TestMetricsAfterRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "mt")})
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "mt", Namespace: "obs", ErrorMode: "dlq"}})
	cfg.Auth.Tokens = apiAdminToken + ":admin"
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	const good, bad = 300, 10
	var vals []string
	for i := range good + bad {
		if i%31 == 7 && i/31 < bad {
			vals = append(vals, `{"broken":`)
			continue
		}
		vals = append(vals, fmt.Sprintf(`{"i":%d}`, i))
	}
	testnode.Produce(t, cl, "mt", vals, 2)
	testnode.WaitRows(t, n, "obs.mt", good+bad, time.Minute)
	waitCommitted(t, n, "obs.mt", map[int32]int64{0: (good + bad) / 2, 1: (good + bad) / 2})

	resp, err := http.Get("http://" + n.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics without a token: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	value := func(name string, labels map[string]string) (float64, bool) {
		f, ok := fams[name]
		if !ok {
			return 0, false
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				switch {
				case m.Counter != nil:
					return m.GetCounter().GetValue(), true
				case m.Gauge != nil:
					return m.GetGauge().GetValue(), true
				case m.Histogram != nil:
					return float64(m.GetHistogram().GetSampleCount()), true
				}
			}
		}
		return 0, false
	}
	tbl := map[string]string{"table": "obs.mt"}
	cases := []struct {
		name   string
		labels map[string]string
		check  func(float64) bool
		want   string
	}{
		{"floe_records_consumed_total", tbl, func(v float64) bool { return v == good+bad }, "records produced"},
		{"floe_records_dead_lettered_total", tbl, func(v float64) bool { return v == bad }, "bad records"},
		{"floe_records_skipped_total", tbl, func(v float64) bool { return v == 0 }, "0"},
		{"floe_bytes_consumed_total", tbl, func(v float64) bool { return v > 0 }, "> 0"},
		{"floe_files_written_total", tbl, func(v float64) bool { return v >= 1 }, ">= 1"},
		{"floe_bytes_written_total", tbl, func(v float64) bool { return v > 0 }, "> 0"},
		{"floe_commits_total", tbl, func(v float64) bool { return v >= 1 }, ">= 1"},
		{"floe_commit_failures_total", tbl, func(v float64) bool { return v == 0 }, "0"},
		{"floe_commit_duration_seconds", tbl, func(v float64) bool { return v >= 1 }, "a commit observed"},
		{"floe_table_freshness_seconds", tbl, func(v float64) bool { return v > 0 && v < 600 }, "seconds since the newest record"},
		{"floe_consumer_lag_records", map[string]string{"table": "obs.mt", "topic": "mt", "partition": "0"}, func(v float64) bool { return v == 0 }, "0"},
		{"floe_consumer_lag_records", map[string]string{"table": "obs.mt", "topic": "mt", "partition": "1"}, func(v float64) bool { return v == 0 }, "0"},
		{"floe_consumer_lag_seconds", map[string]string{"table": "obs.mt", "partition": "1"}, func(v float64) bool { return v == 0 }, "0"},
		{"floe_ledger_pending_entries", tbl, func(v float64) bool { return v == 0 }, "0"},
		{"floe_ledger_pending_bytes", tbl, func(v float64) bool { return v == 0 }, "0"},
		{"floe_table_state", map[string]string{"table": "obs.mt", "state": "RUNNING"}, func(v float64) bool { return v == 1 }, "1"},
		{"floe_table_state", map[string]string{"table": "obs.mt", "state": "FAILED"}, func(v float64) bool { return v == 0 }, "0"},
		{"floe_raft_is_leader", nil, func(v float64) bool { return v == 1 }, "1"},
		{"floe_raft_state", map[string]string{"state": "leader"}, func(v float64) bool { return v == 1 }, "1"},
		{"floe_raft_apply_duration_seconds", nil, func(v float64) bool { return v >= 1 }, "applies observed"},
		{"floe_raft_leader_changes_total", nil, func(v float64) bool { return v >= 1 }, "the first election"},
		{"floe_raft_applied_index", nil, func(v float64) bool { return v > 0 }, "> 0"},
	}
	for _, c := range cases {
		v, ok := value(c.name, c.labels)
		if !ok {
			t.Errorf("%s%v: missing", c.name, c.labels)
			continue
		}
		if !c.check(v) {
			t.Errorf("%s%v = %g, want %s", c.name, c.labels, v, c.want)
		}
	}
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}
