package deploy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/floe-io/floe/proto/metrics"
)

// ---------------------------------------------------------------- monitoring

// The alert rules and the dashboard name only metrics the metrics package
// exposes, so that renaming a metric breaks this test rather than an alert
// that then never fires.

var floeMetricRE = regexp.MustCompile(`\bfloe_[a-z_]+`)

// unknownMetrics returns the floe_* names in a PromQL expression that are
// not metrics (a histogram's _bucket, _sum and _count series count as its
// family).
func unknownMetrics(expr string) []string {
	known := metrics.Names()
	histograms := []string{metrics.CommitDuration, metrics.RaftApplyDuration}
	var bad []string
	for _, name := range floeMetricRE.FindAllString(expr, -1) {
		base := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(histograms, b) {
				base = b
			}
		}
		if !slices.Contains(known, base) {
			bad = append(bad, name)
		}
	}
	return bad
}

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func readRules(t *testing.T) ruleFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "deploy/prometheus/alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.Unmarshal(b, &rf); err != nil {
		t.Fatalf("alerts.yml: %v", err)
	}
	return rf
}

func TestAlertRulesUseRealMetrics(t *testing.T) {
	rf := readRules(t)
	if len(rf.Groups) != 1 || rf.Groups[0].Name != "floe" {
		t.Fatalf("alerts.yml must hold one group named floe")
	}
	var alerts []string
	for _, r := range rf.Groups[0].Rules {
		if r.Alert == "" {
			t.Errorf("rule %q is not an alert", r.Record)
			continue
		}
		alerts = append(alerts, r.Alert)
		if strings.TrimSpace(r.Expr) == "" {
			t.Errorf("%s: no expr", r.Alert)
		}
		if bad := unknownMetrics(r.Expr); len(bad) > 0 {
			t.Errorf("%s: expr names %v, which the metrics package does not expose (metrics.Names)", r.Alert, bad)
		}
		if r.Labels["severity"] == "" {
			t.Errorf("%s: no severity label", r.Alert)
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: needs summary and description annotations", r.Alert)
		}
		for _, a := range r.Annotations {
			if bad := unknownMetrics(a); len(bad) > 0 {
				t.Errorf("%s: annotation names %v, not a metric", r.Alert, bad)
			}
		}
	}
	for _, want := range []string{"FloeTableFreshnessHigh", "FloeTableNotRunning", "FloeDeadLettersGrowing",
		"FloeCatalogSyncLagging", "FloeNodeDown", "FloeNoRaftLeader"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("alert %s is missing", want)
		}
	}

	// The promtool tests name only alerts that exist.
	b, err := os.ReadFile(filepath.Join(root, "deploy/prometheus/alerts_test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		RuleFiles []string `yaml:"rule_files"`
		Tests     []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(b, &tests); err != nil {
		t.Fatalf("alerts_test.yml: %v", err)
	}
	if !slices.Equal(tests.RuleFiles, []string{"alerts.yml"}) {
		t.Errorf("alerts_test.yml rule_files = %v, want [alerts.yml]", tests.RuleFiles)
	}
	tested := map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if !slices.Contains(alerts, a.Alertname) {
				t.Errorf("alerts_test.yml tests %s, which alerts.yml does not define", a.Alertname)
			}
			tested[a.Alertname] = true
		}
	}
	for _, want := range []string{"FloeTableFreshnessHigh", "FloeTableNotRunning", "FloeDeadLettersGrowing"} {
		if !tested[want] {
			t.Errorf("alerts_test.yml does not test %s", want)
		}
	}
}

func TestUnknownMetrics(t *testing.T) {
	if bad := unknownMetrics(`histogram_quantile(0.99, sum by (le) (rate(floe_commit_duration_seconds_bucket[5m]))) and up{job=~"floe.*"}`); len(bad) != 0 {
		t.Errorf("known names reported unknown: %v", bad)
	}
	if bad := unknownMetrics(`floe_no_such_metric > 0 or floe_records_consumed_total_bucket`); len(bad) != 2 {
		t.Errorf("unknown names not reported: %v", bad)
	}
}

func TestDashboard(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "deploy/grafana/floe-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		Expr string `json:"expr"`
	}
	type panel struct {
		Title   string   `json:"title"`
		Type    string   `json:"type"`
		Targets []target `json:"targets"`
		Panels  []panel  `json:"panels"` // in collapsed rows
	}
	var d struct {
		SchemaVersion int     `json:"schemaVersion"`
		UID           string  `json:"uid"`
		Panels        []panel `json:"panels"`
		Templating    struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("floe-dashboard.json: %v", err)
	}
	if d.SchemaVersion != 39 || d.UID == "" {
		t.Errorf("schemaVersion %d, uid %q", d.SchemaVersion, d.UID)
	}
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		q, _ := json.Marshal(v.Query)
		vars[v.Name] = v.Type + " " + string(q)
	}
	if !strings.HasPrefix(vars["DS_PROMETHEUS"], `datasource "prometheus"`) {
		t.Errorf("DS_PROMETHEUS variable: %s", vars["DS_PROMETHEUS"])
	}
	if !strings.HasPrefix(vars["table"], "query ") || !strings.Contains(vars["table"], "label_values(floe_table_state, table)") {
		t.Errorf("table variable: %s", vars["table"])
	}
	var exprs int
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q has no targets", p.Title)
			}
			for _, tg := range p.Targets {
				exprs++
				if len(floeMetricRE.FindAllString(tg.Expr, -1)) == 0 {
					t.Errorf("panel %q: %q names no floe metric", p.Title, tg.Expr)
				}
				if bad := unknownMetrics(tg.Expr); len(bad) > 0 {
					t.Errorf("panel %q: %v are not metrics", p.Title, bad)
				}
			}
		}
	}
	walk(d.Panels)
	if exprs < 10 {
		t.Errorf("only %d queries in the dashboard", exprs)
	}
}

// With promtool installed (deploy/prometheus/check.sh installs it), the rules
// pass promtool's own checks and tests.
func TestPromtool(t *testing.T) {
	cache := os.Getenv("FLOE_INTEROP_CACHE")
	if cache == "" {
		cache = filepath.Join(root, ".cache")
	} else if !filepath.IsAbs(cache) {
		cache = filepath.Join(root, cache)
	}
	promtool, err := filepath.Abs(filepath.Join(cache, "promtool", "promtool"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(promtool); err != nil {
		t.Skipf("promtool is not installed (deploy/prometheus/check.sh installs it): %v", err)
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = filepath.Join(root, "deploy/prometheus")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

var sidecarIncludeRE = regexp.MustCompile(`include\s*[:=]\s*"?(floe_[a-z_]+)`)

// TestTemplatesUseRealMetrics: the ECS templates' metrics sidecar publishes
// Floe series by name (autoscaling steers on one); each must be a metric
// the node exports.
func TestTemplatesUseRealMetrics(t *testing.T) {
	for _, path := range []string{"cloudformation/floe.yaml", "terraform/main.tf"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// The collector's metricstransform picks series by name with
		// `include: <name>` (YAML) or `include = "<name>"` (HCL).
		found := sidecarIncludeRE.FindAllStringSubmatch(string(data), -1)
		if len(found) == 0 {
			t.Errorf("%s: no sidecar include of a Floe metric found: the check has nothing to check", path)
		}
		for _, m := range found {
			if bad := unknownMetrics(m[1]); len(bad) > 0 {
				t.Errorf("%s: the sidecar includes %s, which Floe does not export", path, m[1])
			}
		}
	}
}
