package fsm

import (
	"slices"

	"github.com/floe-io/floe/internal/config"
)

// TableSpec is the replicated form of an API mapping's table
// (config.Table), owned by the FSM so that the Raft log, snapshots and the
// state backup no longer change when the configuration's Go types do.
//
// The JSON keys are frozen at the Go field names the first release wrote
// (config.Table has yaml tags only, so encoding/json used the field names).
// New keys (snake_case) would need an older node to read them during a
// rolling upgrade, and it cannot: it would keep a mapping with its settings
// dropped and route topics differently from the newer nodes. Writing both
// the old and new keys would double every mapping and still leave the old
// keys in the format forever. With the tags frozen, a rename in config only
// changes the conversions below, never the bytes. Durations are nanoseconds
// and sizes bytes, as config.Duration and config.ByteSize encode today, but
// as plain integers: a JSON method added to a config type cannot leak here.
// Fields are never omitted when empty, as before: the bytes stay those an
// older node writes for the same mapping (Mapping.Same compares bytes).
type TableSpec struct {
	Topic            string               `json:"Topic"`
	TopicRegex       string               `json:"TopicRegex"`
	Namespace        string               `json:"Namespace"`
	Name             string               `json:"Name"`
	Format           string               `json:"Format"`
	Subject          string               `json:"Subject"`
	ErrorMode        string               `json:"ErrorMode"`
	DeadLetterTopic  string               `json:"DeadLetterTopic"`
	Tombstones       string               `json:"Tombstones"`
	StartOffset      string               `json:"StartOffset"`
	SnapshotMaxAge   int64                `json:"SnapshotMaxAge"` // ns
	SnapshotMaxCount int                  `json:"SnapshotMaxCount"`
	OrphanMinAge     int64                `json:"OrphanMinAge"` // ns
	Compaction       CompactionSpec       `json:"Compaction"`
	PartitionBy      []PartitionFieldSpec `json:"PartitionBy"`
	// Added after the first release, so omitted when zero (the node's
	// default): a mapping that leaves them unset encodes to the bytes an
	// older node writes, and an older node skips the keys when set.
	MaxNestingDepth int `json:"MaxNestingDepth,omitempty"`
	MaxColumns      int `json:"MaxColumns,omitempty"`
	// StorageClass: the S3 storage class of the table's data files; set,
	// it needs ProtocolTableSettings (see Level).
	StorageClass string `json:"StorageClass,omitempty"`
	// Formats are the table formats the committer writes (config.Table's);
	// nil is the default, [iceberg], so that a mapping leaving it unset, or
	// setting [iceberg], keeps the bytes an older node writes.
	Formats []string `json:"Formats,omitempty"`
	// Mode is "upsert" or empty (append: the default, written as nothing
	// so that an append mapping keeps its bytes); Key the upsert key's
	// payload fields (empty: the Kafka record key).
	Mode string   `json:"Mode,omitempty"`
	Key  []string `json:"Key,omitempty"`
	// DeltaCheckpointInterval and DeltaLogRetention (ns) are
	// config.DeltaSettings; zero is the default. Set, they need
	// ProtocolTableSettings (see Level).
	DeltaCheckpointInterval int   `json:"DeltaCheckpointInterval,omitempty"`
	DeltaLogRetention       int64 `json:"DeltaLogRetention,omitempty"`
}

// CompactionSpec is the replicated config.Compaction; keys frozen as in
// TableSpec.
type CompactionSpec struct {
	Enabled          *bool   `json:"Enabled"`
	TargetFileSize   int64   `json:"TargetFileSize"` // bytes
	MinInputFiles    int     `json:"MinInputFiles"`
	HotMinInputFiles int     `json:"HotMinInputFiles"`
	SmallRatio       float64 `json:"SmallRatio"`
	CoolDown         int64   `json:"CoolDown"`        // ns
	MaxBytesPerHour  int64   `json:"MaxBytesPerHour"` // bytes
	Window           string  `json:"Window"`
	Interval         int64   `json:"Interval"` // ns
}

// PartitionFieldSpec is the replicated config.PartitionField; keys frozen
// as in TableSpec.
type PartitionFieldSpec struct {
	Column    string `json:"Column"`
	Transform string `json:"Transform"`
}

// SpecOf converts a validated mapping table to its replicated form.
func SpecOf(t config.Table) TableSpec {
	c := t.Compaction
	var parts []PartitionFieldSpec
	for _, p := range t.PartitionBy {
		parts = append(parts, PartitionFieldSpec{Column: p.Column, Transform: p.Transform})
	}
	return TableSpec{
		Topic: t.Topic, TopicRegex: t.TopicRegex, Namespace: t.Namespace, Name: t.Name, Format: t.Format,
		Subject: t.Subject, ErrorMode: t.ErrorMode, DeadLetterTopic: t.DeadLetterTopic, Tombstones: t.Tombstones,
		StartOffset: t.StartOffset, SnapshotMaxAge: int64(t.SnapshotMaxAge), SnapshotMaxCount: t.SnapshotMaxCount,
		OrphanMinAge: int64(t.OrphanMinAge),
		Compaction: CompactionSpec{
			Enabled: cloneBool(c.Enabled), TargetFileSize: int64(c.TargetFileSize), MinInputFiles: c.MinInputFiles,
			HotMinInputFiles: c.HotMinInputFiles, SmallRatio: c.SmallRatio, CoolDown: int64(c.CoolDown),
			MaxBytesPerHour: int64(c.MaxBytesPerHour), Window: c.Window, Interval: int64(c.Interval),
		},
		PartitionBy: parts, MaxNestingDepth: t.MaxNestingDepth, MaxColumns: t.MaxColumns,
		StorageClass: t.StorageClass,
		Formats:      specFormats(t.Formats),
		Mode:         specMode(t.Mode), Key: slices.Clone(t.Key),
		DeltaCheckpointInterval: t.Delta.CheckpointInterval, DeltaLogRetention: int64(t.Delta.LogRetention),
	}
}

// specFormats is the replicated form of a mapping's formats: nil for the
// default, [iceberg].
func specFormats(f []string) []string {
	if len(f) == 0 || slices.Equal(f, []string{config.FormatIceberg}) {
		return nil
	}
	return slices.Clone(f)
}

// specMode is the replicated form of a mode: append, the default, is
// written as nothing.
func specMode(m string) string {
	if m == config.ModeAppend {
		return ""
	}
	return m
}

// Config converts the replicated form back to the configuration's type.
func (s TableSpec) Config() config.Table {
	c := s.Compaction
	var parts []config.PartitionField
	for _, p := range s.PartitionBy {
		parts = append(parts, config.PartitionField{Column: p.Column, Transform: p.Transform})
	}
	return config.Table{
		Topic: s.Topic, TopicRegex: s.TopicRegex, Namespace: s.Namespace, Name: s.Name, Format: s.Format,
		Subject: s.Subject, ErrorMode: s.ErrorMode, DeadLetterTopic: s.DeadLetterTopic, Tombstones: s.Tombstones,
		StartOffset: s.StartOffset, SnapshotMaxAge: config.Duration(s.SnapshotMaxAge), SnapshotMaxCount: s.SnapshotMaxCount,
		OrphanMinAge: config.Duration(s.OrphanMinAge),
		Compaction: config.Compaction{
			Enabled: cloneBool(c.Enabled), TargetFileSize: config.ByteSize(c.TargetFileSize), MinInputFiles: c.MinInputFiles,
			HotMinInputFiles: c.HotMinInputFiles, SmallRatio: c.SmallRatio, CoolDown: config.Duration(c.CoolDown),
			MaxBytesPerHour: config.ByteSize(c.MaxBytesPerHour), Window: c.Window, Interval: config.Duration(c.Interval),
		},
		PartitionBy: parts, MaxNestingDepth: s.MaxNestingDepth, MaxColumns: s.MaxColumns,
		StorageClass: s.StorageClass,
		Formats:      slices.Clone(s.Formats),
		Mode:         s.Mode, Key: slices.Clone(s.Key),
		Delta: config.DeltaSettings{CheckpointInterval: s.DeltaCheckpointInterval, LogRetention: config.Duration(s.DeltaLogRetention)},
	}
}

// Level returns the protocol level a node needs to write this table as the
// mapping says: ProtocolBase for the settings every build knows, and
// ProtocolTableSettings when the mapping sets one that changes what the
// committer writes (an older build would drop it and write the table its
// old way). Each such setting adds its check here; its key is omitted when
// unset, so a mapping without it keeps the bytes an older node writes.
func (s TableSpec) Level() int {
	if s.Mode == config.ModeUpsert && len(s.PartitionBy) > 0 {
		return ProtocolPartitionedUpsert
	}
	if s.StorageClass != "" {
		// An older build would drop it and write data files in the
		// bucket's default class on the nodes it runs.
		return ProtocolTableSettings
	}
	if specFormats(s.Formats) != nil {
		return ProtocolTableSettings // an older committer would write no Delta log
	}
	if s.Mode != "" || len(s.Key) > 0 {
		// An older build would write an upsert table as append: every
		// version of a key a row.
		return ProtocolTableSettings
	}
	if s.DeltaCheckpointInterval != 0 || s.DeltaLogRetention != 0 {
		// An older committer would checkpoint and clean the log at its
		// fixed 10 versions and 30 days.
		return ProtocolTableSettings
	}
	return ProtocolBase
}

func (s TableSpec) clone() TableSpec {
	s.Compaction.Enabled = cloneBool(s.Compaction.Enabled)
	s.PartitionBy = slices.Clone(s.PartitionBy)
	s.Formats = slices.Clone(s.Formats)
	s.Key = slices.Clone(s.Key)
	return s
}

func cloneBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}
