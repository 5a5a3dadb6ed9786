package config

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the whole configuration of one Floe node.
type Config struct {
	Node      Node      `yaml:"node"`
	Kafka     Kafka     `yaml:"kafka"`
	Warehouse Warehouse `yaml:"warehouse"`
	Tables    []Table   `yaml:"tables"`
	// Namespaces sets per-namespace options, such as where its tables live.
	Namespaces map[string]Namespace `yaml:"namespaces"`
	// CommitInterval is how often each table's buffered records are flushed
	// to a data file and committed.
	CommitInterval Duration `yaml:"commit_interval"`
	// TargetFileSize flushes a table early once its buffered records reach
	// this size in memory, before Parquet's encoding and compression shrink
	// them (JSON-like records by 5-20x), so a written file is smaller;
	// compaction merges files toward this size on disk.
	TargetFileSize ByteSize `yaml:"target_file_size"`
	// MemoryBudget bounds the records the node holds, from fetch until
	// their flush is recorded (three quarters of it; the rest sizes the
	// readers' fetches); fetching pauses when it is reached and the largest
	// buffers flush first (docs/internals.md "Memory budget").
	MemoryBudget ByteSize `yaml:"memory_budget"`
	// MaxNestingDepth and MaxColumns are the tables' default limits on
	// what records can make them hold (default 64 and 1000; see
	// Table.MaxNestingDepth).
	MaxNestingDepth int     `yaml:"max_nesting_depth"`
	MaxColumns      int     `yaml:"max_columns"`
	Log             Log     `yaml:"log"`
	Cluster         Cluster `yaml:"cluster"`
	// Auth and Catalogs: see catalogs.go.
	Auth     Auth     `yaml:"auth"`
	Catalogs Catalogs `yaml:"catalogs"`
	// SchemaRegistry is the Confluent-compatible Schema Registry that the
	// avro, protobuf, json_schema and latest formats read schemas from.
	SchemaRegistry SchemaRegistry `yaml:"schema_registry"`
	// Admin and Notifications: see admin.go.
	Admin         Admin         `yaml:"admin"`
	Notifications Notifications `yaml:"notifications"`
}

// SchemaRegistry says how to reach a Confluent-compatible Schema Registry
// (Confluent, Apicurio's ccompat API, Karapace, Redpanda).
type SchemaRegistry struct {
	// URL is the registry's base URL, e.g. http://registry:8081 (for
	// Apicurio: http://host:8080/apis/ccompat/v7).
	URL string `yaml:"url"`
	// Username and Password: HTTP basic auth (Confluent Cloud API key and
	// secret). Empty: none.
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// BearerToken: sent as "Authorization: Bearer ..." instead of basic
	// auth. Empty: none.
	BearerToken string `yaml:"bearer_token"`
	// PasswordFile and BearerTokenFile: the secrets from files (secrets.go).
	PasswordFile    string `yaml:"password_file"`
	BearerTokenFile string `yaml:"bearer_token_file"`
	// Timeout bounds one registry request (default 10s); a registry slower
	// than this is retried with backoff and the table shows DEGRADED.
	Timeout Duration `yaml:"timeout"`
	// RefreshInterval: how often the latest version of a subject is looked
	// up again for the latest format (default 1m). Schemas by id are
	// immutable and cached for the life of the process.
	RefreshInterval Duration `yaml:"refresh_interval"`
}

// Node identifies this node and where it listens.
type Node struct {
	ID            string `yaml:"id"`
	DataDir       string `yaml:"data_dir"`
	RaftAddr      string `yaml:"raft_addr"`
	AdvertiseAddr string `yaml:"advertise_addr"`
	AdminAddr     string `yaml:"admin_addr"`
	// RPCAddr is where the internal gRPC service (command forwarding,
	// join, health checks) listens; RPCAdvertise what peers dial.
	RPCAddr      string `yaml:"rpc_addr"`
	RPCAdvertise string `yaml:"rpc_advertise_addr"`
	// Zone is this node's availability zone; placement spreads voters,
	// partitions and committers over zones.
	Zone string `yaml:"zone"`
}

// Kafka says how to reach the brokers.
type Kafka struct {
	BootstrapServers []string `yaml:"bootstrap_servers"`
	ClientID         string   `yaml:"client_id"`
	TLS              TLS      `yaml:"tls"`
	SASL             SASL     `yaml:"sasl"`
}

// TLS configures TLS to the brokers.
type TLS struct {
	Enabled            bool   `yaml:"enabled"`
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// SASL configures SASL authentication to the brokers.
type SASL struct {
	// Mechanism: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, or AWS_MSK_IAM
	// (Amazon MSK; the AWS default credential chain, no username or
	// password).
	Mechanism string `yaml:"mechanism"`
	Username  string `yaml:"username"`
	Password  string `yaml:"password"`
	// PasswordFile: the password from a file (secrets.go).
	PasswordFile string `yaml:"password_file"`
}

// Warehouse is where table data and metadata live.
type Warehouse struct {
	// Location is file:///path or s3://bucket/prefix.
	Location string `yaml:"location"`
	S3       S3     `yaml:"s3"`
}

// S3 configures S3 access. Empty credentials use the standard AWS chain
// (environment, shared config, ECS task role, instance profile).
type S3 struct {
	Endpoint        string `yaml:"endpoint"`
	Region          string `yaml:"region"`
	AccessKeyID     string `yaml:"access_key_id"`
	SecretAccessKey string `yaml:"secret_access_key"`
	SessionToken    string `yaml:"session_token"`
	// The credentials from files (secrets.go).
	AccessKeyIDFile     string `yaml:"access_key_id_file"`
	SecretAccessKeyFile string `yaml:"secret_access_key_file"`
	SessionTokenFile    string `yaml:"session_token_file"`
}

// Namespace configures one catalog namespace.
type Namespace struct {
	// Location is where the namespace's tables live (file:// or s3://);
	// default <warehouse>/<namespace>.
	Location string `yaml:"location"`
}

// Table maps one topic, or every topic matching a regex, to a table.
type Table struct {
	Topic      string `yaml:"topic"`
	TopicRegex string `yaml:"topic_regex"`
	// Namespace and Name are templates (see Target): {topic} is the topic
	// name with characters other than letters, digits and _ replaced by _;
	// with topic_regex, {1}..{n} and named groups are its capture groups.
	// Name defaults to {topic}.
	Namespace string `yaml:"namespace"`
	Name      string `yaml:"name"`
	// Format is json (schemaless JSON objects), raw (key and value bytes),
	// or a Schema Registry format: avro, protobuf or json_schema (values in
	// the Confluent wire format: magic byte 0, schema id), or latest (values
	// without a header, decoded with the subject's latest schema).
	Format string `yaml:"format"`
	// Subject names the registry subject of the values for the latest
	// format; {topic} is the topic name as is. Default {topic}-value (the
	// TopicNameStrategy).
	Subject string `yaml:"subject"`
	// ErrorMode says where a record that cannot be decoded goes: log (the
	// table's <name>_dlq table, default; dlq is the same), skip (counted and
	// dropped) or suspend (the table stops at the record until resumed).
	ErrorMode string `yaml:"error_mode"`
	// DeadLetterTopic, with error mode log: a Kafka topic that also
	// receives every dead letter (key, raw value, headers, plus floe.error
	// and floe.source.* headers), at least once. Empty: the table only.
	DeadLetterTopic string `yaml:"dead_letter_topic"`
	// Tombstones says what happens to records with a null (empty) value in
	// decoded formats: ignore (counted and dropped, default) or dlq (a row
	// in the dead-letter table). Raw tables keep them as rows.
	Tombstones string `yaml:"tombstones"`
	// StartOffset is where a partition never seen before starts: earliest
	// (default) or latest.
	StartOffset string `yaml:"start_offset"`
	// SnapshotMaxAge and SnapshotMaxCount bound the table's snapshot
	// history, whichever is stricter (defaults 7 days and
	// DefaultSnapshotMaxCount).
	SnapshotMaxAge   Duration `yaml:"snapshot_max_age"`
	SnapshotMaxCount int      `yaml:"snapshot_max_count"`
	// OrphanMinAge is the safety age of orphan cleanup: unreferenced files
	// younger than this are left alone (default 24h, at least 1h).
	OrphanMinAge Duration `yaml:"orphan_min_age"`
	// Compaction configures the table's background compaction.
	Compaction Compaction `yaml:"compaction"`
	// PartitionBy is the table's partition spec, in order. Changing it
	// evolves the table's spec: new data takes the new spec, old data keeps
	// its own and stays readable.
	PartitionBy []PartitionField `yaml:"partition_by"`
	// MaxNestingDepth and MaxColumns bound what records can make the
	// table: how deep objects, arrays and maps may nest, and how many
	// columns the payload may have counting nested ones. A record (or
	// registry schema) beyond them goes where error_mode says. 0: the
	// node's max_nesting_depth and max_columns.
	MaxNestingDepth int `yaml:"max_nesting_depth"`
	MaxColumns      int `yaml:"max_columns"`
	// StorageClass is the S3 storage class of the table's data files
	// (StorageClasses, e.g. INTELLIGENT_TIERING); empty sends none, so
	// the bucket's default applies. Metadata files (metadata.json,
	// manifest lists, manifests) always take the default: they are small
	// and read by every scan and commit, where the infrequent-access
	// classes bill a 128 KiB minimum per object and every GB read. A
	// file:// warehouse ignores it.
	StorageClass string `yaml:"storage_class"`
	// Formats are the table formats whose logs the committer writes over
	// the same Parquet files: [iceberg] (default, also when empty),
	// [iceberg, delta] or [delta]. A [delta] table is published only as
	// Delta (no Iceberg catalog entry anywhere); its committer still keeps
	// the Iceberg metadata as its own ledger (docs/formats.md).
	Formats []string `yaml:"formats"`
	// Mode is append (every record a row, the default) or upsert (one
	// live row per key: a newer record replaces the row of its key, a
	// tombstone deletes it; docs/upsert.md).
	Mode string `yaml:"mode"`
	// Key names the top-level payload fields whose values identify a row
	// of an upsert table; empty: the Kafka record key.
	Key []string `yaml:"key"`
	// Delta tunes the table's Delta Lake log (formats [iceberg, delta]);
	// zero values are the defaults. Ignored while the formats do not name
	// delta, so turning delta off and on keeps them.
	Delta DeltaSettings `yaml:"delta"`
}

// DeltaSettings tune a table's Delta Lake log.
type DeltaSettings struct {
	// CheckpointInterval is the number of versions between two Parquet
	// checkpoints, 1 to MaxCheckpointInterval; 0: DefaultCheckpointInterval.
	CheckpointInterval int `yaml:"checkpoint_interval"`
	// LogRetention is how long log entries are kept for time travel
	// before the log cleanup deletes them, at least 1h; 0:
	// DefaultLogRetention.
	LogRetention Duration `yaml:"log_retention"`
}

// Bounds and defaults of DeltaSettings (sinks/delta has the same defaults).
const (
	DefaultCheckpointInterval = 10
	// MaxCheckpointInterval bounds the JSON commits a reader replays after
	// the newest checkpoint when it opens the log.
	MaxCheckpointInterval = 1000
	DefaultLogRetention   = 30 * 24 * time.Hour
	// MinLogRetention: a shorter retention would delete versions a reader
	// that opened the log moments ago is still reading.
	MinLogRetention = time.Hour
	// MaxLogRetention bounds the log kept (ten years).
	MaxLogRetention = 10 * 365 * 24 * time.Hour
)

// Table formats a mapping may name in Formats.
const (
	FormatIceberg = "iceberg"
	FormatDelta   = "delta"
)

// WritesDelta reports whether the committer also writes the table's Delta
// Lake log.

// DefaultSnapshotMaxCount: Tableflow's cap. Every commit rewrites the
// metadata file with every retained snapshot, so the count, not the data,
// sets a quiet table's metadata bytes and commit CPU (issue 38); 100 keeps
// 16 minutes of history at a 10 s interval, a day at 15 min.
const DefaultSnapshotMaxCount = 100

func (t Table) WritesDelta() bool { return slices.Contains(t.Formats, FormatDelta) }

// PublishesIceberg reports whether the table is published as an Iceberg
// table (catalog entries, the REST catalog endpoint): every table but a
// [delta] one, whose Iceberg metadata is only the committer's ledger.
func (t Table) PublishesIceberg() bool {
	return len(t.Formats) == 0 || slices.Contains(t.Formats, FormatIceberg)
}

// Table modes.
const (
	ModeAppend = "append"
	ModeUpsert = "upsert"
)

// PartitionField partitions a table by a transform of one column.
type PartitionField struct {
	// Column is a top-level column: a metadata column such as
	// _kafka_timestamp or _kafka_key, or a payload field.
	Column string `yaml:"column"`
	// Transform is identity, year, month, day, hour, bucket[N] or truncate[W].
	// Time transforms need a date or timestamp column (_kafka_timestamp).
	Transform string `yaml:"transform"`
}

// Compaction configures bin-packing compaction of a table's small files.
type Compaction struct {
	// Enabled switches compaction on (the default) or off.
	Enabled *bool `yaml:"enabled"`
	// TargetFileSize of compacted files; default: target_file_size.
	TargetFileSize ByteSize `yaml:"target_file_size"`
	// MinInputFiles small files in a cold partition trigger a rewrite
	// (default 5).
	MinInputFiles int `yaml:"min_input_files"`
	// HotMinInputFiles small files trigger a rewrite even while the table
	// is being written (default 16).
	HotMinInputFiles int `yaml:"hot_min_input_files"`
	// SmallRatio also triggers a cold partition when at least this share
	// of its files is small (default 0.5; 0 disables).
	SmallRatio float64 `yaml:"small_ratio"`
	// CoolDown: a partition written within this is hot (default 5m).
	CoolDown Duration `yaml:"cool_down"`
	// MaxBytesPerHour caps the input bytes rewritten per hour (default 10GiB).
	MaxBytesPerHour ByteSize `yaml:"max_bytes_per_hour"`
	// Window limits compaction to a daily UTC window "HH:MM-HH:MM" (may
	// wrap midnight); empty means any time.
	Window string `yaml:"window"`
	// Interval between compaction checks (default 1m).
	Interval Duration `yaml:"interval"`
}

// On reports whether compaction is enabled.
func (c Compaction) On() bool { return c.Enabled == nil || *c.Enabled }

// InWindow reports whether t falls inside the compaction window.
func (c Compaction) InWindow(t time.Time) bool {
	if c.Window == "" {
		return true
	}
	from, to, err := parseWindow(c.Window)
	if err != nil {
		return false
	}
	m := t.UTC().Hour()*60 + t.UTC().Minute()
	if from <= to {
		return m >= from && m < to
	}
	return m >= from || m < to
}

func parseWindow(w string) (int, int, error) {
	var h1, m1, h2, m2 int
	if _, err := fmt.Sscanf(w, "%d:%d-%d:%d", &h1, &m1, &h2, &m2); err != nil || h1 > 23 || h2 > 24 || m1 > 59 || m2 > 59 || h1 < 0 || h2 < 0 || m1 < 0 || m2 < 0 {
		return 0, 0, fmt.Errorf("%q is not a window like 01:00-05:00", w)
	}
	return h1*60 + m1, h2*60 + m2, nil
}

// Log configures logging.
type Log struct {
	Level  string `yaml:"level"`  // debug, info, warn, error
	Format string `yaml:"format"` // text or json
}

// Defaults returns the configuration used where a field is not set.
func Defaults() Config {
	host, _ := os.Hostname()
	if host == "" {
		host = "floe-1"
	}
	return Config{
		Node: Node{
			ID:        host,
			DataDir:   "./floe-data",
			RaftAddr:  "127.0.0.1:7420",
			AdminAddr: "127.0.0.1:7421",
			RPCAddr:   "127.0.0.1:7422",
		},
		Cluster: Cluster{
			BootstrapExpect: 1, MaxVoters: 5,
			FailureTimeout: Duration(5 * time.Second), DeadServerTimeout: Duration(10 * time.Minute),
			DrainTimeout: Duration(60 * time.Second), BackupInterval: Duration(time.Minute),
			TLS: ClusterTLS{VerifyIncoming: true},
		},
		Kafka: Kafka{BootstrapServers: []string{"localhost:9092"}, ClientID: "floe"},
		// No warehouse.location: where the tables go is the operator's
		// choice, and a default (./warehouse, relative to wherever the
		// process happened to start) wrote them somewhere nobody looked.
		CommitInterval:  Duration(10 * time.Second),
		TargetFileSize:  128 << 20,
		MemoryBudget:    1 << 30,
		MaxNestingDepth: DefaultMaxNestingDepth,
		MaxColumns:      DefaultMaxColumns,
		Log:             Log{Level: "info", Format: "text"},
		Catalogs:        catalogDefaults(),
		SchemaRegistry:  SchemaRegistry{Timeout: Duration(10 * time.Second), RefreshInterval: Duration(time.Minute)},
	}
}

// TableDefaults fills the defaults of one mapping.
func (t *Table) applyDefaults() {
	// cmp.Or: each field keeps its value unless it is the zero value.
	t.Namespace = cmp.Or(t.Namespace, "default")
	t.Format = cmp.Or(t.Format, "json")
	t.ErrorMode = cmp.Or(t.ErrorMode, "log")
	t.Tombstones = cmp.Or(t.Tombstones, "ignore")
	t.Subject = cmp.Or(t.Subject, "{topic}-value")
	t.StartOffset = cmp.Or(t.StartOffset, "earliest")
	t.SnapshotMaxAge = cmp.Or(t.SnapshotMaxAge, Duration(7*24*time.Hour))
	t.SnapshotMaxCount = cmp.Or(t.SnapshotMaxCount, DefaultSnapshotMaxCount)
	t.OrphanMinAge = cmp.Or(t.OrphanMinAge, Duration(24*time.Hour))
	c := &t.Compaction
	c.MinInputFiles = cmp.Or(c.MinInputFiles, 5)
	c.HotMinInputFiles = cmp.Or(c.HotMinInputFiles, 16)
	c.SmallRatio = cmp.Or(c.SmallRatio, 0.5)
	c.CoolDown = cmp.Or(c.CoolDown, Duration(5*time.Minute))
	c.MaxBytesPerHour = cmp.Or(c.MaxBytesPerHour, 10<<30)
	c.Interval = cmp.Or(c.Interval, Duration(time.Minute))
	t.Name = cmp.Or(t.Name, "{topic}")
}

// SanitizeName turns a topic name into a table name.
func SanitizeName(topic string) string {
	var b strings.Builder
	for _, r := range topic {
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// MaxConfigBytes caps the configuration file: the largest real one is a
// few hundred mappings, far below it.
const MaxConfigBytes = 4 << 20

// Load reads path (optional: empty means defaults only), applies environment
// overrides from env (os.Environ() format), fills defaults and validates.
func Load(path string, env []string) (Config, error) {
	cfg := Defaults()
	if path != "" {
		data, err := readCapped(path, MaxConfigBytes)
		if err != nil {
			return Config{}, fmt.Errorf("reading config: %w", err)
		}
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		dec.KnownFields(true)
		if err := dec.Decode(&cfg); err != nil && err.Error() != "EOF" {
			return Config{}, yamlFileError(path, data, err)
		}
	}
	if err := applyEnv(&cfg, env); err != nil {
		return Config{}, err
	}
	if err := cfg.readSecrets(); err != nil {
		return Config{}, err
	}
	for i := range cfg.Tables {
		cfg.Tables[i].applyDefaults()
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	if err := cfg.normalize(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// normalize turns a relative file:// warehouse into an absolute one, so that
// metadata written today still resolves if the process later starts in
// another directory.
func (c *Config) normalize() error {
	loc := c.Warehouse.Location
	if !strings.HasPrefix(loc, "file://") {
		c.Warehouse.Location = strings.TrimSuffix(loc, "/")
		return nil
	}
	p := strings.TrimPrefix(loc, "file://")
	abs, err := filepath.Abs(p)
	if err != nil {
		return &FieldError{Field: "warehouse.location", Msg: err.Error()}
	}
	c.Warehouse.Location = "file://" + abs
	return nil
}

// SchemaFormat reports whether a table format reads schemas from the
// Schema Registry.
func SchemaFormat(format string) bool {
	switch format {
	case "avro", "protobuf", "json_schema", "latest":
		return true
	}
	return false
}

// SubjectFor expands a subject template for a topic ({topic} as is).
func SubjectFor(tmpl, topic string) string { return strings.ReplaceAll(tmpl, "{topic}", topic) }

// DeadLetters reports whether an error mode writes bad records to the
// dead-letter table (log, and its older name dlq).
func DeadLetters(mode string) bool { return mode == "log" || mode == "dlq" }
