package config

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

const validYAML = `
node:
  id: n1
  data_dir: /tmp/floe
kafka:
  bootstrap_servers: [127.0.0.1:9092]
warehouse:
  location: file:///tmp/wh
tables:
  - topic: orders
`

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "floe.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDefaultsAndEnv(t *testing.T) {
	cfg, err := Load(write(t, validYAML), []string{
		"FLOE_COMMIT_INTERVAL=3s",
		"FLOE_TARGET_FILE_SIZE=64MiB",
		"FLOE_KAFKA_BOOTSTRAP_SERVERS=a:1, b:2",
		"FLOE_WAREHOUSE_S3_REGION=eu-west-1",
		"HOME=/root",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CommitInterval.D() != 3*time.Second || cfg.TargetFileSize != 64<<20 {
		t.Fatalf("env overrides not applied: %+v", cfg)
	}
	if strings.Join(cfg.Kafka.BootstrapServers, ",") != "a:1,b:2" || cfg.Warehouse.S3.Region != "eu-west-1" {
		t.Fatalf("env overrides not applied: %+v", cfg.Kafka)
	}
	tb := cfg.Tables[0]
	ns, name, err := tb.Target("orders", nil)
	if err != nil || ns != "default" || name != "orders" || tb.Format != "json" || tb.ErrorMode != "log" || tb.Tombstones != "ignore" || tb.Subject != "{topic}-value" || tb.StartOffset != "earliest" {
		t.Fatalf("table defaults: %+v", tb)
	}
}

func TestTablesFromEnv(t *testing.T) {
	cfg, err := Load(write(t, validYAML), []string{`FLOE_TABLES=[{"topic_regex": "^ev\\..*", "namespace": "raw", "format": "raw"}]`})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Tables) != 1 || cfg.Tables[0].TopicRegex != `^ev\..*` || cfg.Tables[0].Name != "{topic}" {
		t.Fatalf("tables from env: %+v", cfg.Tables)
	}
}

func TestEveryInvalidFieldIsNamed(t *testing.T) {
	cases := []struct {
		field string
		yaml  string
		env   []string
	}{
		{"node.id", validYAML, []string{"FLOE_NODE_ID=bad id"}},
		{"node.data_dir", validYAML, []string{"FLOE_NODE_DATA_DIR="}},
		{"node.raft_addr", validYAML, []string{"FLOE_NODE_RAFT_ADDR=nope"}},
		{"node.admin_addr", validYAML, []string{"FLOE_NODE_ADMIN_ADDR=:"}},
		{"node.advertise_addr", validYAML, []string{"FLOE_NODE_ADVERTISE_ADDR=x"}},
		{"kafka.bootstrap_servers", validYAML, []string{"FLOE_KAFKA_BOOTSTRAP_SERVERS=,"}},
		{"kafka.bootstrap_servers[0]", validYAML, []string{"FLOE_KAFKA_BOOTSTRAP_SERVERS=localhost"}},
		{"kafka.sasl.mechanism", validYAML, []string{"FLOE_KAFKA_SASL_MECHANISM=GSSAPI"}},
		{"kafka.sasl.username", validYAML, []string{"FLOE_KAFKA_SASL_MECHANISM=PLAIN"}},
		{"kafka.tls.key_file", validYAML, []string{"FLOE_KAFKA_TLS_CERT_FILE=/c.pem"}},
		{"warehouse.location", validYAML, []string{"FLOE_WAREHOUSE_LOCATION=hdfs://x/y"}},
		{"warehouse.location", validYAML, []string{"FLOE_WAREHOUSE_LOCATION=s3:///prefix"}},
		{"warehouse.s3.endpoint", validYAML, []string{"FLOE_WAREHOUSE_LOCATION=s3://b/p", "FLOE_WAREHOUSE_S3_ENDPOINT=localhost"}},
		{"warehouse.s3.secret_access_key", validYAML, []string{"FLOE_WAREHOUSE_LOCATION=s3://b/p", "FLOE_WAREHOUSE_S3_ACCESS_KEY_ID=k"}},
		{"commit_interval", validYAML, []string{"FLOE_COMMIT_INTERVAL=1ms"}},
		{"commit_interval", validYAML, []string{"FLOE_COMMIT_INTERVAL=soon"}},
		{"target_file_size", validYAML, []string{"FLOE_TARGET_FILE_SIZE=10KB"}},
		{"target_file_size", validYAML, []string{"FLOE_TARGET_FILE_SIZE=big"}},
		{"memory_budget", validYAML, []string{"FLOE_MEMORY_BUDGET=1MiB"}},
		{"log.level", validYAML, []string{"FLOE_LOG_LEVEL=loud"}},
		{"log.format", validYAML, []string{"FLOE_LOG_FORMAT=xml"}},
		{"tables[0].topic", validYAML, []string{`FLOE_TABLES=[{"namespace": "x"}]`}},
		{"tables[0].topic_regex", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "topic_regex": "b"}]`}},
		{"tables[0].topic_regex", validYAML, []string{`FLOE_TABLES=[{"topic_regex": "("}]`}},
		{"tables[0].namespace", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "namespace": "a b"}]`}},
		{"tables[0].name", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "name": "x.y"}]`}},
		{"tables[0].name", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "name": "x_dlq"}]`}},
		{"tables[0].format", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "format": "thrift"}]`}},
		{"schema_registry.url", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "format": "avro"}]`}},
		{"schema_registry.url", validYAML, []string{"FLOE_SCHEMA_REGISTRY_URL=registry:8081"}},
		{"schema_registry.username", validYAML, []string{"FLOE_SCHEMA_REGISTRY_PASSWORD=p"}},
		{"schema_registry.bearer_token", validYAML, []string{"FLOE_SCHEMA_REGISTRY_USERNAME=u", "FLOE_SCHEMA_REGISTRY_BEARER_TOKEN=t"}},
		{"schema_registry.timeout", validYAML, []string{"FLOE_SCHEMA_REGISTRY_TIMEOUT=1ms"}},
		{"schema_registry.refresh_interval", validYAML, []string{"FLOE_SCHEMA_REGISTRY_REFRESH_INTERVAL=10ms"}},
		{"tables[0].subject", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "subject": "{name}-value"}]`}},
		{"tables[0].tombstones", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "tombstones": "keep"}]`}},
		{"tables[0].dead_letter_topic", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "dead_letter_topic": "a b"}]`}},
		{"tables[0].dead_letter_topic", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "error_mode": "skip", "dead_letter_topic": "dlq"}]`}},
		{"tables[0].error_mode", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "error_mode": "ignore"}]`}},
		{"tables[0].start_offset", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "start_offset": "middle"}]`}},
		{"tables[0].orphan_min_age", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "orphan_min_age": "5m"}]`}},
		{"tables[0].snapshot_max_count", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "snapshot_max_count": -1}]`}},
		{"tables[0].snapshot_max_age", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "snapshot_max_age": "1s"}]`}},
		{"tables[1].name", validYAML, []string{`FLOE_TABLES=[{"topic": "a"}, {"topic": "b", "name": "a"}]`}},
		{"tables[0].partition_by[0].transform", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "partition_by": [{"column": "x", "transform": "weekly"}]}]`}},
		{"tables[0].partition_by[0].transform", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "partition_by": [{"column": "x", "transform": "bucket[0]"}]}]`}},
		{"tables[0].partition_by[0].column", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "partition_by": [{"column": "a.b", "transform": "identity"}]}]`}},
		{"tables[0].partition_by[1].column", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "partition_by": [{"column": "x", "transform": "day"}, {"column": "x", "transform": "day"}]}]`}},
		{"tables[0].compaction.window", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "compaction": {"window": "25:00-26:00"}}]`}},
		{"tables[0].compaction.min_input_files", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "compaction": {"min_input_files": 1}}]`}},
		{"tables[0].compaction.hot_min_input_files", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "compaction": {"min_input_files": 9, "hot_min_input_files": 4}}]`}},
		{"tables[1].name", validYAML, []string{`FLOE_TABLES=[{"topic": "a.b"}, {"topic": "a_b"}]`}},
		{"tables[0].name", validYAML, []string{`FLOE_TABLES=[{"topic_regex": "^(a)$", "name": "{2}"}]`}},
		{"tables[0].namespace", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "namespace": "{team}"}]`}},
		{"tables[0].name", validYAML, []string{`FLOE_TABLES=[{"topic_regex": "^a", "name": "{topic}_dlq"}]`}},
		{"tables[0].name", validYAML, []string{`FLOE_TABLES=[{"topic": "a", "name": "{topic"}]`}},
	}
	for _, c := range cases {
		t.Run(c.field+"/"+strings.Join(c.env, " "), func(t *testing.T) {
			_, err := Load(write(t, c.yaml), c.env)
			if err == nil {
				t.Fatal("invalid config accepted")
			}
			var fe *FieldError
			named := errors.As(err, &fe) && fe.Field == c.field
			if !named && !strings.Contains(err.Error(), c.field+" ") && !strings.Contains(err.Error(), c.field+":") {
				t.Fatalf("error %q does not name %s", err, c.field)
			}
		})
	}
}

func TestRegistryFormats(t *testing.T) {
	cfg, err := Load(write(t, validYAML+"schema_registry: {url: http://r:8081, username: u, password: p}\n"),
		[]string{`FLOE_TABLES=[{"topic": "a", "format": "avro", "error_mode": "dlq"}, {"topic": "b", "format": "latest", "subject": "{topic}-v", "tombstones": "dlq"}]`})
	if err != nil {
		t.Fatal(err)
	}
	if !DeadLetters(cfg.Tables[0].ErrorMode) || SubjectFor(cfg.Tables[1].Subject, "b.c") != "b.c-v" || cfg.SchemaRegistry.Timeout.D() != 10*time.Second {
		t.Fatalf("registry config: %+v %+v", cfg.Tables, cfg.SchemaRegistry)
	}
}

func TestUnknownYAMLFieldRefused(t *testing.T) {
	_, err := Load(write(t, validYAML+"\ncomit_interval: 5s\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "comit_interval") {
		t.Fatalf("unknown field: %v", err)
	}
}

func TestEnvVarsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range EnvVars() {
		if !strings.Contains(string(doc), "`"+v.Name+"`") {
			t.Errorf("docs/configuration.md does not document %s (%s)", v.Name, v.Field)
		}
	}
	vars := EnvVars()
	want := map[string]bool{"FLOE_NODE_ID": false, "FLOE_KAFKA_SASL_PASSWORD": false, "FLOE_TABLES": false, "FLOE_WAREHOUSE_S3_ENDPOINT": false}
	for _, v := range vars {
		if _, ok := want[v.Name]; ok {
			want[v.Name] = true
		}
	}
	for k, ok := range want {
		if !ok {
			t.Errorf("%s missing from EnvVars", k)
		}
	}
}

func TestNameTemplates(t *testing.T) {
	cfg, err := Load(write(t, validYAML), []string{`FLOE_TABLES=[{"topic_regex": "^(?P<team>[a-z]+)\\.events\\.(.+)$", "namespace": "{team}", "name": "{2}_events"}, {"topic": "web.clicks-v2"}]`})
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(cfg.Tables[0].TopicRegex)
	ns, name, err := cfg.Tables[0].Target("sales.events.order-created", re)
	if err != nil || ns != "sales" || name != "order_created_events" {
		t.Fatalf("regex template: %s.%s %v", ns, name, err)
	}
	ns, name, err = cfg.Tables[1].Target("web.clicks-v2", nil)
	if err != nil || ns != "default" || name != "web_clicks_v2" {
		t.Fatalf("topic template: %s.%s %v", ns, name, err)
	}
	if !cfg.Tables[0].UsesTopic() {
		t.Fatal("template with groups does not use the topic")
	}
}

func TestNamespaceLocations(t *testing.T) {
	cfg, err := Load(write(t, validYAML+"namespaces:\n  sales: {location: s3://lake/sales}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Namespaces["sales"].Location != "s3://lake/sales" {
		t.Fatalf("namespaces: %+v", cfg.Namespaces)
	}
	if _, err := Load(write(t, validYAML), []string{`FLOE_NAMESPACES={"sales": {"location": "ftp://x/y"}}`}); err == nil || !strings.Contains(err.Error(), "namespaces.sales.location") {
		t.Fatalf("bad namespace location: %v", err)
	}
}

func TestCompactionWindow(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 1, 1, h, m, 0, 0, time.UTC) }
	night := Compaction{Window: "23:00-02:00"}
	day := Compaction{Window: "01:00-05:00"}
	for _, c := range []struct {
		c    Compaction
		t    time.Time
		want bool
	}{{night, at(23, 30), true}, {night, at(1, 59), true}, {night, at(2, 0), false}, {night, at(12, 0), false},
		{day, at(1, 0), true}, {day, at(4, 59), true}, {day, at(5, 0), false}, {Compaction{}, at(12, 0), true}} {
		if got := c.c.InWindow(c.t); got != c.want {
			t.Errorf("%s at %s: %v", c.c.Window, c.t.Format("15:04"), got)
		}
	}
	off := false
	if (Compaction{Enabled: &off}).On() || !(Compaction{}).On() {
		t.Fatal("enabled flag")
	}
}

func TestValidateMappingNamesFields(t *testing.T) {
	cfg := Defaults()
	cases := []struct {
		name  string
		m     Table
		field string
	}{
		{"no topic", Table{}, "mapping.topic"},
		{"both", Table{Topic: "a", TopicRegex: "b"}, "mapping.topic_regex"},
		{"bad regex", Table{TopicRegex: "("}, "mapping.topic_regex"},
		{"bad format", Table{Topic: "a", Format: "xml"}, "mapping.format"},
		{"registry format without registry", Table{Topic: "a", Format: "avro"}, "schema_registry.url"},
		{"bad error mode", Table{Topic: "a", ErrorMode: "explode"}, "mapping.error_mode"},
		{"bad transform", Table{Topic: "a", PartitionBy: []PartitionField{{Column: "x", Transform: "week"}}}, "mapping.partition_by[0].transform"},
		{"short snapshot age", Table{Topic: "a", SnapshotMaxAge: Duration(time.Second)}, "mapping.snapshot_max_age"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := c.m
			err := cfg.ValidateMapping(&m, "mapping")
			if err == nil || !strings.Contains(err.Error(), c.field+":") {
				t.Fatalf("error %v does not name %s", err, c.field)
			}
		})
	}
	ok := Table{Topic: "orders"}
	if err := cfg.ValidateMapping(&ok, "mapping"); err != nil {
		t.Fatal(err)
	}
	if ok.Namespace != "default" || ok.Format != "json" || ok.SnapshotMaxCount != DefaultSnapshotMaxCount {
		t.Fatalf("defaults not applied: %+v", ok)
	}
}

// TestValidateFormats: formats names the table formats; anything but
// [iceberg], [delta] or [iceberg, delta] is refused naming the field and
// the values allowed, and the order is canonical.
func TestValidateFormats(t *testing.T) {
	cfg := Defaults()
	for _, tc := range []struct {
		name    string
		formats []string
		want    []string // canonical formats; nil with wantErr
		wantErr string
	}{
		{"default", nil, nil, ""},
		{"iceberg", []string{"iceberg"}, []string{"iceberg"}, ""},
		{"both", []string{"iceberg", "delta"}, []string{"iceberg", "delta"}, ""},
		{"both reversed", []string{"delta", "iceberg"}, []string{"iceberg", "delta"}, ""},
		{"delta alone", []string{"delta"}, []string{"delta"}, ""},
		{"unknown", []string{"hudi"}, nil, `mapping.formats: "hudi": use [iceberg], [delta] or [iceberg, delta]`},
		{"twice", []string{"iceberg", "iceberg"}, nil, "mapping.formats: iceberg is named twice"},
		{"too many", []string{"iceberg", "delta", "iceberg"}, nil, "mapping.formats: 3 formats"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Table{Topic: "a", Formats: tc.formats}
			err := cfg.ValidateMapping(&m, "mapping")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(m.Formats, tc.want) {
				t.Fatalf("formats %v, %v; want %v", m.Formats, err, tc.want)
			}
			if m.WritesDelta() != slices.Contains(tc.want, "delta") {
				t.Fatalf("WritesDelta %v for %v", m.WritesDelta(), m.Formats)
			}
			if m.PublishesIceberg() != !slices.Equal(tc.want, []string{"delta"}) {
				t.Fatalf("PublishesIceberg %v for %v", m.PublishesIceberg(), m.Formats)
			}
		})
	}
}

// TestValidateDeltaSettings: the Delta log settings are bounded, refused
// naming the field; zero is the default.
func TestValidateDeltaSettings(t *testing.T) {
	cfg := Defaults()
	for _, tc := range []struct {
		name    string
		d       DeltaSettings
		wantErr string
	}{
		{"defaults", DeltaSettings{}, ""},
		{"bounds", DeltaSettings{CheckpointInterval: 1, LogRetention: Duration(time.Hour)}, ""},
		{"upper bounds", DeltaSettings{CheckpointInterval: MaxCheckpointInterval, LogRetention: Duration(MaxLogRetention)}, ""},
		{"negative interval", DeltaSettings{CheckpointInterval: -1}, "mapping.delta.checkpoint_interval: -1: use 1 to 1000"},
		{"interval too large", DeltaSettings{CheckpointInterval: 1001}, "mapping.delta.checkpoint_interval: 1001"},
		{"retention too short", DeltaSettings{LogRetention: Duration(59 * time.Minute)}, "mapping.delta.log_retention: 59m0s: use 1h0m0s"},
		{"negative retention", DeltaSettings{LogRetention: Duration(-time.Hour)}, "mapping.delta.log_retention"},
		{"retention too long", DeltaSettings{LogRetention: Duration(MaxLogRetention + time.Hour)}, "mapping.delta.log_retention"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Table{Topic: "a", Formats: []string{"iceberg", "delta"}, Delta: tc.d}
			err := cfg.ValidateMapping(&m, "mapping")
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestDeltaSettingsYAML: the settings are read from a tables entry's
// delta block.
func TestDeltaSettingsYAML(t *testing.T) {
	var tb Table
	if err := yaml.Unmarshal([]byte("topic: a\nformats: [iceberg, delta]\ndelta:\n  checkpoint_interval: 5\n  log_retention: 48h\n"), &tb); err != nil {
		t.Fatal(err)
	}
	if tb.Delta.CheckpointInterval != 5 || tb.Delta.LogRetention.D() != 48*time.Hour {
		t.Fatalf("read %+v", tb.Delta)
	}
}
