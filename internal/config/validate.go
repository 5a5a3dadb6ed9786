package config

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/floe-io/floe/internal/names"
)

// FieldError is a validation error that names the field at fault.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return "config: " + e.Field + ": " + e.Msg }

// Validate fills the defaults of table mappings, then checks every field and
// returns all problems joined, each a *FieldError naming its field.
func (c *Config) Validate() error {
	for i := range c.Tables {
		c.Tables[i].applyDefaults()
	}
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	c.validateNode(bad)
	c.validateCluster(bad)
	c.validateInternalTLS(bad)
	c.validateKafka(bad)
	c.validateWarehouse(bad)
	c.validateCatalogs(bad)
	c.validateRegistry(bad)
	c.validateAdmin(bad) // admin.go
	c.validateLimits(bad)
	c.validateTables(bad)
	c.validateNamespaces(bad)
	return errors.Join(errs...)
}

// checkAddr checks that v is host:port; an empty v is a problem only if
// required.
func checkAddr(bad func(field, format string, args ...any), field, v string, required bool) {
	if v == "" {
		if required {
			bad(field, "must not be empty")
		}
		return
	}
	if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
		bad(field, "%q is not host:port", v)
	}
}

func (c *Config) validateNode(bad func(field, format string, args ...any)) {
	if c.Node.ID == "" {
		bad("node.id", "must not be empty")
	} else if !nameRe.MatchString(c.Node.ID) {
		bad("node.id", "%q: use letters, digits, '.', '_' and '-'", c.Node.ID)
	}
	if c.Node.DataDir == "" {
		bad("node.data_dir", "must not be empty")
	}
	checkAddr(bad, "node.raft_addr", c.Node.RaftAddr, true)
	checkAddr(bad, "node.advertise_addr", c.Node.AdvertiseAddr, false)
	checkAddr(bad, "node.admin_addr", c.Node.AdminAddr, true)
	checkAddr(bad, "node.rpc_addr", c.Node.RPCAddr, true)
	checkAddr(bad, "node.rpc_advertise_addr", c.Node.RPCAdvertise, false)
}

func (c *Config) validateCluster(bad func(field, format string, args ...any)) {
	if c.Cluster.BootstrapExpect < 0 {
		bad("cluster.bootstrap_expect", "%d: must be 0 (join only) or more", c.Cluster.BootstrapExpect)
	}
	if c.Cluster.BootstrapExpect > 1 && len(c.Cluster.Join) == 0 {
		bad("cluster.join", "must list the peers when cluster.bootstrap_expect is %d", c.Cluster.BootstrapExpect)
	}
	if c.Cluster.BootstrapExpect == 0 && len(c.Cluster.Join) == 0 {
		bad("cluster.join", "must list peers to join when cluster.bootstrap_expect is 0")
	}
	for i, j := range c.Cluster.Join {
		checkAddr(bad, fmt.Sprintf("cluster.join[%d]", i), j, true)
	}
	if v := c.Cluster.MaxVoters; v < 1 || v > 7 || v%2 == 0 {
		bad("cluster.max_voters", "%d: use an odd number from 1 to 7", v)
	}
	if c.Cluster.FailureTimeout.D() < time.Second {
		bad("cluster.failure_timeout", "%s: at least 1s", c.Cluster.FailureTimeout.D())
	}
	if c.Cluster.DeadServerTimeout.D() < c.Cluster.FailureTimeout.D() {
		bad("cluster.dead_server_timeout", "%s: must not be shorter than cluster.failure_timeout", c.Cluster.DeadServerTimeout.D())
	}
	if d := c.Cluster.DrainTimeout.D(); d < time.Second || d > 120*time.Second {
		bad("cluster.drain_timeout", "%s: from 1s to 120s (ECS stopTimeout is at most 120s)", d)
	}
	if c.Cluster.BackupInterval.D() < time.Second {
		bad("cluster.backup_interval", "%s: at least 1s", c.Cluster.BackupInterval.D())
	}
}

func (c *Config) validateKafka(bad func(field, format string, args ...any)) {
	if len(c.Kafka.BootstrapServers) == 0 {
		bad("kafka.bootstrap_servers", "must list at least one host:port")
	}
	for i, s := range c.Kafka.BootstrapServers {
		if _, port, err := net.SplitHostPort(s); err != nil || port == "" {
			bad(fmt.Sprintf("kafka.bootstrap_servers[%d]", i), "%q is not host:port", s)
		}
	}
	if c.Kafka.TLS.CertFile != "" && c.Kafka.TLS.KeyFile == "" {
		bad("kafka.tls.key_file", "required when kafka.tls.cert_file is set")
	}
	switch strings.ToUpper(c.Kafka.SASL.Mechanism) {
	case "":
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		if c.Kafka.SASL.Username == "" {
			bad("kafka.sasl.username", "required with mechanism %s", c.Kafka.SASL.Mechanism)
		}
	case "AWS_MSK_IAM":
		c.validateMSKIAM(bad)
	default:
		bad("kafka.sasl.mechanism", "%q: use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or AWS_MSK_IAM", c.Kafka.SASL.Mechanism)
	}
}

// validateMSKIAM: AWS_MSK_IAM signs with the AWS default credential chain
// (worker/source/mskiam.go), so a username or password would be silently
// ignored; and MSK's IAM listeners (ports 9098, 9198) speak TLS only.
func (c *Config) validateMSKIAM(bad func(field, format string, args ...any)) {
	s := c.Kafka.SASL
	if s.Username != "" {
		bad("kafka.sasl.username", "not used with AWS_MSK_IAM: the AWS credential chain (task role, environment, shared config) signs; remove it")
	}
	// The password_file has been read into password by now (secrets.go);
	// name the field the operator set.
	switch {
	case s.PasswordFile != "":
		bad("kafka.sasl.password_file", "not used with AWS_MSK_IAM: the AWS credential chain signs; remove it")
	case s.Password != "":
		bad("kafka.sasl.password", "not used with AWS_MSK_IAM: the AWS credential chain signs; remove it")
	}
	if !c.Kafka.TLS.Enabled {
		bad("kafka.tls.enabled", "must be true with AWS_MSK_IAM: MSK's IAM listeners (ports 9098, 9198) accept TLS only")
	}
}

// validateLimits checks the node-wide flush and memory limits and logging.
func (c *Config) validateLimits(bad func(field, format string, args ...any)) {
	if c.CommitInterval.D() < 100*time.Millisecond {
		bad("commit_interval", "%s is below the 100ms minimum", c.CommitInterval.D())
	}
	if c.TargetFileSize < 1<<20 {
		bad("target_file_size", "%d bytes is below the 1MiB minimum", c.TargetFileSize)
	}
	if c.MemoryBudget < 16<<20 {
		bad("memory_budget", "%d bytes is below the 16MiB minimum", c.MemoryBudget)
	}
	checkRecordLimits(bad, "", c.MaxNestingDepth, c.MaxColumns, false)
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "%q: use debug, info, warn or error", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		bad("log.format", "%q: use text or json", c.Log.Format)
	}
}

// validateTables checks every mapping and that no two fixed-topic mappings
// target the same table.
func (c *Config) validateTables(bad func(field, format string, args ...any)) {
	seen := map[string]int{}
	for i, t := range c.Tables {
		f := func(name string) string { return fmt.Sprintf("tables[%d].%s", i, name) }
		c.validateTable(&t, f, bad)
		if t.Topic != "" && t.TopicRegex == "" && topicRe.MatchString(t.Topic) {
			// A name that breaks the rule is reported by checkTemplates.
			if ns, name, err := t.Target(t.Topic, nil); err == nil {
				key := ns + "." + name
				if j, ok := seen[key]; ok {
					bad(f("name"), "table %s is already the target of tables[%d]", key, j)
				}
				seen[key] = i
			}
		}
	}
}

func (c *Config) validateNamespaces(bad func(field, format string, args ...any)) {
	for ns, n := range c.Namespaces {
		if r := names.Reason(ns); r != "" {
			bad("namespaces."+names.Preview(ns), "not a legal namespace name: %s", r)
		}
		if n.Location != "" {
			c.validateLocation("namespaces."+ns+".location", n.Location, bad)
		}
	}
}

// validateTable checks one mapping (defaults applied); f names its fields.
func (c *Config) validateTable(t *Table, f func(string) string, bad func(field, format string, args ...any)) {
	if !t.checkBounds(f, bad) {
		return
	}
	c.validateSource(t, f, bad)
	if t.SnapshotMaxAge.D() < time.Minute {
		bad(f("snapshot_max_age"), "%s is below the 1m minimum", t.SnapshotMaxAge.D())
	}
	if t.OrphanMinAge.D() < time.Hour {
		bad(f("orphan_min_age"), "%s is below the 1h minimum: younger files may belong to a flush in flight", t.OrphanMinAge.D())
	}
	validateCompaction(t.Compaction, f, bad)
	validatePartitionBy(t.PartitionBy, f, bad)
	checkStorageClass(t, f, bad)
	validateFormats(t, f, bad)
	validateMode(t, f, bad)
	validateDelta(t.Delta, f, bad)
	if t.SnapshotMaxCount < 1 {
		bad(f("snapshot_max_count"), "%d: keep at least 1 snapshot", t.SnapshotMaxCount)
	}
}

// validateSource checks what a mapping reads and how it decodes and treats
// records: topic, naming templates, format, subject, error handling, start.
func (c *Config) validateSource(t *Table, f func(string) string, bad func(field, format string, args ...any)) {
	switch {
	case t.Topic == "" && t.TopicRegex == "":
		bad(f("topic"), "set topic or topic_regex")
	case t.Topic != "" && t.TopicRegex != "":
		bad(f("topic_regex"), "set topic or topic_regex, not both")
	case t.TopicRegex != "":
		if _, err := regexp.Compile(t.TopicRegex); err != nil {
			bad(f("topic_regex"), "%v", err)
		}
	}
	t.checkTemplates(bad, f)
	switch {
	case t.Format == "json", t.Format == "raw":
	case SchemaFormat(t.Format):
		if c.SchemaRegistry.URL == "" {
			bad("schema_registry.url", "required by %s %s", f("format"), t.Format)
		}
	default:
		bad(f("format"), "%q: use json, raw, avro, protobuf, json_schema or latest", t.Format)
	}
	if strings.Count(t.Subject, "{") != strings.Count(t.Subject, "{topic}") || strings.Contains(t.Subject, "}") != strings.Contains(t.Subject, "{topic}") {
		bad(f("subject"), "%q: the only placeholder is {topic}", t.Subject)
	}
	checkRecordLimits(bad, f(""), t.MaxNestingDepth, t.MaxColumns, true)
	switch t.ErrorMode {
	case "log", "dlq", "skip", "suspend":
	default:
		bad(f("error_mode"), "%q: use log, skip or suspend", t.ErrorMode)
	}
	if t.DeadLetterTopic != "" {
		switch {
		case !topicRe.MatchString(t.DeadLetterTopic):
			bad(f("dead_letter_topic"), "%s is not a legal Kafka topic name", names.Preview(t.DeadLetterTopic))
		case !DeadLetters(t.ErrorMode):
			bad(f("dead_letter_topic"), "needs error_mode log, not %s", t.ErrorMode)
		case t.DeadLetterTopic == t.Topic:
			bad(f("dead_letter_topic"), "is the source topic %s", t.Topic)
		}
	}
	switch t.Tombstones {
	case "ignore", "dlq":
	default:
		bad(f("tombstones"), "%q: use ignore or dlq", t.Tombstones)
	}
	switch t.StartOffset {
	case "earliest", "latest":
	default:
		bad(f("start_offset"), "%q: use earliest or latest", t.StartOffset)
	}
}

// validateDelta checks a table's Delta log settings; zero is the default.
func validateDelta(d DeltaSettings, f func(string) string, bad func(field, format string, args ...any)) {
	if n := d.CheckpointInterval; n < 0 || n > MaxCheckpointInterval {
		bad(f("delta.checkpoint_interval"), "%d: use 1 to %d versions between checkpoints (0: the default, %d)", n, MaxCheckpointInterval, DefaultCheckpointInterval)
	}
	if r := d.LogRetention.D(); r != 0 && (r < MinLogRetention || r > MaxLogRetention) {
		bad(f("delta.log_retention"), "%s: use %s to %s (0: the default, %s)", r, MinLogRetention, MaxLogRetention, DefaultLogRetention)
	}
}

// maxFormats bounds the formats list (there are two formats).
const maxFormats = 2

// validateFormats checks the table formats and puts them in their one
// order (iceberg first), so that [delta, iceberg] and [iceberg, delta]
// replicate as the same mapping. [delta] alone is a table published only
// as Delta; its committer still keeps Iceberg metadata as its own ledger
// (docs/formats.md).
func validateFormats(t *Table, f func(string) string, bad func(field, format string, args ...any)) {
	const allowed = "use [iceberg], [delta] or [iceberg, delta]"
	if len(t.Formats) > maxFormats {
		bad(f("formats"), "%d formats: %s", len(t.Formats), allowed)
		return
	}
	seen := map[string]bool{}
	for _, v := range t.Formats {
		switch {
		case v != FormatIceberg && v != FormatDelta:
			bad(f("formats"), "%s: %s", names.Preview(v), allowed)
			return
		case seen[v]:
			bad(f("formats"), "%s is named twice", v)
			return
		}
		seen[v] = true
	}
	if seen[FormatDelta] && seen[FormatIceberg] {
		t.Formats = []string{FormatIceberg, FormatDelta}
	}
}

func validateCompaction(c Compaction, f func(string) string, bad func(field, format string, args ...any)) {
	if c.MinInputFiles < 2 {
		bad(f("compaction.min_input_files"), "%d: at least 2 files make a rewrite", c.MinInputFiles)
	}
	if c.HotMinInputFiles < c.MinInputFiles {
		bad(f("compaction.hot_min_input_files"), "%d is below min_input_files %d", c.HotMinInputFiles, c.MinInputFiles)
	}
	if c.TargetFileSize != 0 && c.TargetFileSize < 1<<20 {
		bad(f("compaction.target_file_size"), "%d bytes is below the 1MiB minimum", c.TargetFileSize)
	}
	if c.SmallRatio < 0 || c.SmallRatio > 1 {
		bad(f("compaction.small_ratio"), "%g: use a share between 0 and 1", c.SmallRatio)
	}
	if c.Window != "" {
		if _, _, err := parseWindow(c.Window); err != nil {
			bad(f("compaction.window"), "%v", err)
		}
	}
	if c.Interval.D() < 100*time.Millisecond {
		bad(f("compaction.interval"), "%s is below the 100ms minimum", c.Interval.D())
	}
}

// validatePartitionBy checks a partition spec: top-level columns, known
// transforms, no field twice.
func validatePartitionBy(fields []PartitionField, f func(string) string, bad func(field, format string, args ...any)) {
	seen := map[string]bool{}
	for j, pf := range fields {
		pfield := func(n string) string { return f(fmt.Sprintf("partition_by[%d].%s", j, n)) }
		if pf.Column == "" || strings.Contains(pf.Column, ".") {
			bad(pfield("column"), "%q: name a top-level column", pf.Column)
		}
		if !transformRe.MatchString(pf.Transform) {
			bad(pfield("transform"), "%q: use identity, year, month, day, hour, bucket[N] or truncate[W]", pf.Transform)
		}
		key := pf.Column + "/" + pf.Transform
		if seen[key] {
			bad(pfield("column"), "%s(%s) is listed twice", pf.Transform, pf.Column)
		}
		seen[key] = true
	}
}

// validateMode checks a table's mode and upsert key. Upsert writes
// position deletes, which need Iceberg format version 2: every table Floe
// creates is version 2 (cluster/catalog), there is no setting to ask for 1.
func validateMode(t *Table, f func(string) string, bad func(field, format string, args ...any)) {
	switch t.Mode {
	case "", ModeAppend:
		if len(t.Key) > 0 {
			bad(f("key"), "is for mode upsert; mode is %s", cmp.Or(t.Mode, ModeAppend))
		}
		return
	case ModeUpsert:
	default:
		bad(f("mode"), "%q: use append or upsert", t.Mode)
		return
	}
	if len(t.Key) > 0 && t.Format == "raw" {
		bad(f("key"), "a raw table has no payload fields: leave key empty to key by the Kafka record key")
	}
	seen := map[string]bool{}
	for j, k := range t.Key {
		switch {
		case k == "" || strings.Contains(k, "."):
			bad(f(fmt.Sprintf("key[%d]", j)), "%q: name a top-level payload field", k)
		case strings.HasPrefix(k, "_kafka_"):
			bad(f(fmt.Sprintf("key[%d]", j)), "%q is a metadata column: leave key empty to key by the Kafka record key", k)
		case seen[k]:
			bad(f(fmt.Sprintf("key[%d]", j)), "%q is listed twice", k)
		}
		seen[k] = true
	}
}

// ValidateMapping fills the defaults of a mapping made through the admin
// API and validates it as the configuration validates its tables; errors
// name fields under prefix (e.g. "mapping"). The configuration supplies
// what a mapping depends on (the schema registry).
func (c *Config) ValidateMapping(t *Table, prefix string) error {
	t.applyDefaults()
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	c.validateTable(t, func(name string) string { return prefix + "." + name }, bad)
	return errors.Join(errs...)
}

var transformRe = regexp.MustCompile(`^(identity|year|month|day|hour|bucket\[[1-9][0-9]*\]|truncate\[[1-9][0-9]*\])$`)

var topicRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,249}$`)

var nameRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.\-]*$`)

func (c *Config) validateLocation(field, loc string, bad func(field, format string, args ...any)) bool {
	u, err := url.Parse(loc)
	if err != nil {
		bad(field, "%q is not a URI: %v", loc, err)
		return false
	}
	switch u.Scheme {
	case "file":
	case "s3", "s3a":
		if u.Host == "" {
			bad(field, "%q names no bucket", loc)
			return false
		}
	default:
		bad(field, "%q: use file:///path or s3://bucket/prefix", loc)
		return false
	}
	return true
}

func (c *Config) validateWarehouse(bad func(field, format string, args ...any)) {
	loc := c.Warehouse.Location
	if loc == "" {
		bad("warehouse.location", "not set: say where the tables go, e.g. s3://my-bucket/floe or file:///var/lib/floe/warehouse (or FLOE_WAREHOUSE_LOCATION)")
		return
	}
	if !c.validateLocation("warehouse.location", loc, bad) {
		return
	}
	u, _ := url.Parse(loc)
	switch u.Scheme {
	case "file":
	case "s3", "s3a":
		if c.Warehouse.S3.Endpoint != "" {
			if e, err := url.Parse(c.Warehouse.S3.Endpoint); err != nil || e.Scheme == "" || e.Host == "" {
				bad("warehouse.s3.endpoint", "%q is not a URL like http://127.0.0.1:9000", c.Warehouse.S3.Endpoint)
			}
		}
		if (c.Warehouse.S3.AccessKeyID == "") != (c.Warehouse.S3.SecretAccessKey == "") {
			bad("warehouse.s3.secret_access_key", "set both access_key_id and secret_access_key, or neither to use the AWS credential chain")
		}
	}
}

func (c *Config) validateRegistry(bad func(field, format string, args ...any)) {
	r := c.SchemaRegistry
	if r.URL != "" {
		if u, err := url.Parse(r.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("schema_registry.url", "%q is not a URL like http://registry:8081", r.URL)
		}
	}
	if r.Password != "" && r.Username == "" {
		bad("schema_registry.username", "required when schema_registry.password is set")
	}
	if r.BearerToken != "" && r.Username != "" {
		bad("schema_registry.bearer_token", "set basic auth (username, password) or a bearer token, not both")
	}
	if r.Timeout.D() < 100*time.Millisecond {
		bad("schema_registry.timeout", "%s is below the 100ms minimum", r.Timeout.D())
	}
	if r.RefreshInterval.D() < time.Second {
		bad("schema_registry.refresh_interval", "%s is below the 1s minimum", r.RefreshInterval.D())
	}
}
