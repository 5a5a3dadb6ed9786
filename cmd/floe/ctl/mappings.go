package ctl

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/protobuf/encoding/protojson"
	"gopkg.in/yaml.v3"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

func mappingsCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "mappings",
		Aliases: []string{"mapping"},
		Short:   "List, show, create, update and delete topic mappings",
	}
	groupRun(cmd)
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List every topic mapping (from the API and from configuration files)",
		Args:  exactArgs(0),
		RunE: o.action(func(e *env, _ []string) error {
			r, err := e.tables.ListMappings(e.ctx, &adminv1.ListMappingsRequest{})
			return e.show(r, err, func() error {
				tw := newTab(e.out)
				fmt.Fprintln(tw, "NAME\tSOURCE\tTOPIC\tTABLE\tFORMAT\tERROR-MODE")
				for _, m := range r.GetMappings() {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.GetName(), dash(m.GetSource()), mappingTopic(m),
						mappingTable(m), dash(m.GetFormat()), dash(m.GetErrorMode()))
				}
				return tw.Flush()
			})
		}),
	}, &cobra.Command{
		Use:   "get NAME",
		Short: "Show one mapping",
		Args:  exactArgs(1, "NAME"),
		RunE: o.action(func(e *env, args []string) error {
			m, err := e.tables.GetMapping(e.ctx, &adminv1.GetMappingRequest{Name: args[0]})
			return e.show(m, err, func() error { return writeMapping(e.out, m) })
		}),
	}, &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a mapping: its topics stop flowing; tables stay",
		Args:  exactArgs(1, "NAME"),
		RunE: o.action(func(e *env, args []string) error {
			return e.write(e.tables.DeleteMapping(e.ctx, &adminv1.DeleteMappingRequest{Name: args[0]}))
		}),
	}, mappingWriteCmd(o, false), mappingWriteCmd(o, true))
	return cmd
}

func mappingTopic(m *adminv1.Mapping) string {
	if m.GetTopicRegex() != "" {
		return "/" + m.GetTopicRegex() + "/"
	}
	return dash(m.GetTopic())
}

func mappingTable(m *adminv1.Mapping) string {
	switch {
	case m.GetNamespace() != "" && m.GetTable() != "":
		return m.GetNamespace() + "." + m.GetTable()
	case m.GetTable() != "":
		return m.GetTable()
	case m.GetNamespace() != "":
		return m.GetNamespace() + ".-"
	}
	return "-"
}

func writeMapping(w io.Writer, m *adminv1.Mapping) error {
	var parts []string
	for _, p := range m.GetPartitionBy() {
		parts = append(parts, p.GetColumn()+":"+p.GetTransform())
	}
	tw := newTab(w)
	for _, kv := range [][2]string{
		{"name", m.GetName()},
		{"source", m.GetSource()},
		{"topic", m.GetTopic()},
		{"topic_regex", m.GetTopicRegex()},
		{"namespace", m.GetNamespace()},
		{"table", m.GetTable()},
		{"format", m.GetFormat()},
		{"subject", m.GetSubject()},
		{"error_mode", m.GetErrorMode()},
		{"dead_letter_topic", m.GetDeadLetterTopic()},
		{"tombstones", m.GetTombstones()},
		{"start_offset", m.GetStartOffset()},
		{"partition_by", strings.Join(parts, ", ")},
		{"snapshot_max_age", m.GetSnapshotMaxAge()},
		{"snapshot_max_count", fmt.Sprint(m.GetSnapshotMaxCount())},
		{"orphan_min_age", m.GetOrphanMinAge()},
		{"max_nesting_depth", limitString(m.GetMaxNestingDepth())},
		{"max_columns", limitString(m.GetMaxColumns())},
		{"storage_class", storageClassString(m.GetStorageClass())},
		{"formats", formatsString(m.GetFormats())},
		{"mode", m.GetMode()},
		{"key", strings.Join(m.GetKey(), ",")},
		{"delta_checkpoint_interval", defaultString(m.GetDeltaCheckpointInterval(), "10")},
		{"delta_log_retention", defaultString(m.GetDeltaLogRetention(), "720h")},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", kv[0], dash(kv[1]))
	}
	return tw.Flush()
}

// storageClassString shows a storage class, empty being the bucket's.
func storageClassString(c string) string {
	if c == "" {
		return "bucket default"
	}
	return c
}

// formatsString shows a mapping's table formats, none being the default.
func formatsString(f []string) string {
	if len(f) == 0 {
		return "iceberg"
	}
	return strings.Join(f, ", ")
}

// defaultString shows a setting whose zero value is the default def.
func defaultString[T int32 | string](v T, def string) string {
	var zero T
	if v == zero {
		return "default (" + def + ")"
	}
	return fmt.Sprint(v)
}

// limitString shows a record limit, 0 being the node's.
func limitString(v int32) string {
	if v == 0 {
		return "node default"
	}
	return fmt.Sprint(v)
}

// mappingFlags are the flags of mappings create and update.
type mappingFlags struct {
	file             string
	topic            string
	topicRegex       string
	snapshotMaxCount int32
	maxNestingDepth  int32
	maxColumns       int32
	partitionBy      []string
	formats          []string
	key              []string
	deltaCheckpoint  int32
	// the other flags are plain strings, read by name in overlay
}

func (f *mappingFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVarP(&f.file, "file", "f", "", "YAML or JSON file with the mapping's fields in snake_case, as in the API ('-': stdin)")
	fs.StringVar(&f.topic, "topic", "", "topic to map (or --topic-regex)")
	fs.StringVar(&f.topicRegex, "topic-regex", "", "regular expression: map every matching topic (or --topic)")
	fs.String("namespace", "", "table namespace template ({topic}, {1}.., named groups)")
	fs.String("table", "", "table name template ({topic}, {1}.., named groups); --name is the same flag (the configuration file's name field)")
	// The configuration file calls the table name template "name"; a user
	// who learnt it there types --name.
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "name" {
			name = "table"
		}
		return pflag.NormalizedName(name)
	})
	fs.String("format", "", "record format: json, raw, avro, protobuf, json_schema or latest")
	fs.String("subject", "", "schema registry subject")
	fs.String("error-mode", "", "on a bad record: log (dead-letter table), skip or suspend")
	fs.String("dead-letter-topic", "", "Kafka topic for bad records")
	fs.String("tombstones", "", "null-value records: ignore or dlq")
	fs.String("start-offset", "", "start of partitions never seen before: earliest or latest")
	fs.String("mode", "", "append (every record a row) or upsert (one live row per key)")
	fs.StringSliceVar(&f.key, "key", nil, "upsert key: top-level payload fields, comma-separated; empty: the Kafka record key")
	fs.StringArrayVar(&f.partitionBy, "partition-by", nil, "partition field column:transform (identity, year, month, day, hour, bucket[N], truncate[W]); repeatable; replaces the whole list")
	fs.String("snapshot-max-age", "", "expire snapshots older than this Go duration (168h)")
	fs.Int32Var(&f.snapshotMaxCount, "snapshot-max-count", 0, "keep at most this many snapshots")
	fs.String("orphan-min-age", "", "delete unreferenced files older than this Go duration")
	fs.Int32Var(&f.maxNestingDepth, "max-nesting-depth", 0, "refuse records (and registry schemas) nesting deeper, 1 to 256; 0: the node's max_nesting_depth")
	fs.StringSliceVar(&f.formats, "formats", nil, "table formats the committer writes over the same files: iceberg (default), iceberg,delta, or delta (published as Delta only)")
	fs.Int32Var(&f.maxColumns, "max-columns", 0, "refuse records that would take the table past this many columns, 1 to 10000; 0: the node's max_columns")
	fs.Int32Var(&f.deltaCheckpoint, "delta-checkpoint-interval", 0, "Delta log: versions between two checkpoints, 1 to 1000; 0: the default (10)")
	fs.String("delta-log-retention", "", "Delta log: keep entries this Go duration for time travel, at least 1h (720h); empty: the default (720h)")
	fs.String("storage-class", "", "S3 storage class of the table's data files (e.g. INTELLIGENT_TIERING, STANDARD_IA); empty: the bucket's default")
}

// overlay sets the fields of m whose flags were given.
func (f *mappingFlags) overlay(cmd *cobra.Command, m *adminv1.Mapping) error {
	fs := cmd.Flags()
	if fs.Changed("topic") && fs.Changed("topic-regex") {
		return usageErrorf("--topic and --topic-regex: give one")
	}
	if fs.Changed("topic") {
		m.Topic, m.TopicRegex = f.topic, ""
	}
	if fs.Changed("topic-regex") {
		m.TopicRegex, m.Topic = f.topicRegex, ""
	}
	for name, dst := range map[string]*string{
		"namespace":           &m.Namespace,
		"table":               &m.Table,
		"format":              &m.Format,
		"subject":             &m.Subject,
		"error-mode":          &m.ErrorMode,
		"dead-letter-topic":   &m.DeadLetterTopic,
		"tombstones":          &m.Tombstones,
		"start-offset":        &m.StartOffset,
		"mode":                &m.Mode,
		"snapshot-max-age":    &m.SnapshotMaxAge,
		"orphan-min-age":      &m.OrphanMinAge,
		"storage-class":       &m.StorageClass,
		"delta-log-retention": &m.DeltaLogRetention,
	} {
		if fs.Changed(name) {
			v, _ := fs.GetString(name)
			*dst = v
		}
	}
	if fs.Changed("key") {
		m.Key = nil
		for _, k := range f.key {
			if k = strings.TrimSpace(k); k != "" {
				m.Key = append(m.Key, k)
			}
		}
	}
	if fs.Changed("snapshot-max-count") {
		m.SnapshotMaxCount = f.snapshotMaxCount
	}
	if fs.Changed("max-nesting-depth") {
		m.MaxNestingDepth = f.maxNestingDepth
	}
	if fs.Changed("delta-checkpoint-interval") {
		m.DeltaCheckpointInterval = f.deltaCheckpoint
	}
	if fs.Changed("max-columns") {
		m.MaxColumns = f.maxColumns
	}
	if fs.Changed("formats") {
		m.Formats = nil
		for _, v := range f.formats {
			if v = strings.TrimSpace(v); v != "" {
				m.Formats = append(m.Formats, v)
			}
		}
	}
	if fs.Changed("partition-by") {
		m.PartitionBy = nil
		for _, s := range f.partitionBy {
			if strings.TrimSpace(s) == "" {
				continue
			}
			p, err := parsePartitionField(s)
			if err != nil {
				return err
			}
			m.PartitionBy = append(m.PartitionBy, p)
		}
	}
	return nil
}

func parsePartitionField(s string) (*adminv1.PartitionField, error) {
	col, tr, ok := strings.Cut(strings.TrimSpace(s), ":")
	col, tr = strings.TrimSpace(col), strings.TrimSpace(tr)
	if col == "" || (ok && tr == "") {
		return nil, usageErrorf("--partition-by %q: use column:transform", s)
	}
	if !ok {
		tr = "identity"
	}
	return &adminv1.PartitionField{Column: col, Transform: tr}, nil
}

// readMappingFile parses a YAML or JSON mapping file (JSON is YAML) with protojson,
// so its fields are the API's.
func readMappingFile(cmd *cobra.Command, path string) (*adminv1.Mapping, error) {
	var (
		b   []byte
		err error
	)
	if path == "-" {
		b, err = io.ReadAll(cmd.InOrStdin())
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, usageErrorf("--file: %w", err)
	}
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, usageErrorf("%s: %w", path, err)
	}
	if doc == nil {
		return nil, usageErrorf("%s: empty", path)
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, usageErrorf("%s: want a mapping object with the fields of a Mapping", path)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, usageErrorf("%s: %w", path, err)
	}
	m := &adminv1.Mapping{}
	if err := protojson.Unmarshal(js, m); err != nil {
		return nil, usageErrorf("%s: %w", path, err)
	}
	return m, nil
}

// mappingWriteCmd is mappings create (update false) or mappings update (update true).
func mappingWriteCmd(o *options, update bool) *cobra.Command {
	f := &mappingFlags{}
	cmd := &cobra.Command{
		Use:   "create NAME (--topic T | --topic-regex R) [flags]",
		Short: "Create a topic mapping from flags or a YAML/JSON file",
		Long: `Create a topic mapping from flags, or from a YAML or JSON file (-f) holding the Mapping's
fields in snake_case as in the API (flags given as well override the file's fields).
NAME may be left out when the file names the mapping. Creating a mapping that exists with
the same content prints "unchanged"; with other content the server refuses it (exit 7).`,
		Example: `  floe ctl mappings create orders --topic orders --namespace shop --table orders --format avro \
      --partition-by created_at:day --partition-by id:bucket[16]
  floe ctl mappings create -f orders.yaml`,
		Args: maxArgs(1),
	}
	if update {
		cmd.Use = "update NAME [flags]"
		cmd.Example = `  floe ctl mappings update orders --format raw
  floe ctl mappings update -f orders.yaml`
		cmd.Short = "Update a topic mapping: change the fields whose flags are given, or replace it with a file"
		cmd.Long = `Update a mapping made through the API. Without -f the current mapping is fetched and the
fields whose flags are given replace its fields (so "update NAME --format raw" changes only
the format); the full mapping is sent. With -f FILE the file is the complete new mapping
(flags given as well override its fields).`
	}
	f.register(cmd)
	cmd.RunE = o.action(func(e *env, args []string) error {
		var m *adminv1.Mapping
		if f.file != "" {
			var err error
			if m, err = readMappingFile(cmd, f.file); err != nil {
				return err
			}
		}
		name := ""
		if len(args) == 1 {
			name = args[0]
		}
		switch {
		case m != nil && name != "" && m.GetName() != "" && m.GetName() != name:
			return usageErrorf("NAME %q and the file's name %q differ", name, m.GetName())
		case name == "" && (m == nil || m.GetName() == ""):
			return usageErrorf("%s needs the mapping's NAME (argument or name in the file)", cmd.CommandPath())
		case name == "":
			name = m.GetName()
		}
		if m == nil && update {
			cur, err := e.tables.GetMapping(e.ctx, &adminv1.GetMappingRequest{Name: name})
			if err != nil {
				return err
			}
			m = cur
		}
		if m == nil {
			m = &adminv1.Mapping{}
		}
		m.Name = name
		m.Source = "" // output only
		if err := f.overlay(cmd, m); err != nil {
			return err
		}
		if m.GetTopic() != "" && m.GetTopicRegex() != "" {
			return usageErrorf("the mapping has both topic and topic_regex: give one")
		}
		if update {
			return e.write(e.tables.UpdateMapping(e.ctx, &adminv1.UpdateMappingRequest{Mapping: m, Name: m.GetName()}))
		}
		return e.write(e.tables.CreateMapping(e.ctx, &adminv1.CreateMappingRequest{Mapping: m}))
	})
	return cmd
}
