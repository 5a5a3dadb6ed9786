package sink

import (
	"errors"
	"time"

	"github.com/floe-io/floe/internal/config"
)

// ErrConfig marks a failure that only a configuration change can fix (for
// example a partition transform the column's type does not allow); the
// table shows CONFIG_ISSUE with the reason.
var ErrConfig = errors.New("configuration issue")

// TableSpec identifies a target table, how its records are decoded and how
// it is partitioned.
type TableSpec struct {
	Key         string   // ledger.TableKey(Ident)
	Ident       []string // namespace..., name
	Format      string   // json or raw
	PartitionBy []config.PartitionField
	// Mode is config.ModeUpsert for an upsert table (empty or append:
	// append); UpsertKey its key fields (empty: the Kafka record key).
	Mode      string
	UpsertKey []string
}

// Upsert reports whether the table keeps one live row per key.
func (t TableSpec) Upsert() bool { return t.Mode == config.ModeUpsert }

// CompactionPolicy says what one compaction run may do.
type CompactionPolicy struct {
	TargetFileSize   int64
	MinInputFiles    int  // small files that trigger a rewrite of a cold table
	HotMinInputFiles int  // ... of a table still being written
	Hot              bool // written within the cool-down
	// HotFiles names (by base name) the files committed within the
	// cool-down: only their partitions are hot. Nil with Hot set means the
	// whole table is hot (after a restart the loop does not know yet).
	HotFiles map[string]bool
	// SmallRatio also triggers a cold partition when at least this share of
	// its files is small.
	SmallRatio float64
	MaxBytes   int64
}

// RewriteStats describes a planned rewrite and the table's layout when it
// was planned.
type RewriteStats struct {
	FilesBefore, FilesAfter int
	BytesBefore, BytesAfter int64
	SmallAfter              int // written files still below the small threshold
	DataFiles, SmallFiles   int
	Bytes                   int64
	// DeleteFilesRemoved counts the delete files the rewrite removes
	// (an upsert table's position deletes it applied).
	DeleteFilesRemoved int
	// Skipped says why nothing was planned although the table may need
	// it.
	Skipped string
}

// Rewrite is a compaction written but not committed. A sink returns it from
// PlanRewrite and gets it back in CommitRewrite; the worker reads only its
// stats.
type Rewrite interface {
	Stats() RewriteStats
}

// SyncTable is what a catalog mirror is told about one table.
type SyncTable struct {
	Key              string   // ledger.TableKey(Ident)
	Ident            []string // namespace..., name
	MetadataLocation string
	// PreviousMetadataLocation is what this catalog was last pointed at,
	// or the table's previous pointer when it never was.
	PreviousMetadataLocation string
}

// UpsertStats counts what a node's committer did for an upsert table since
// the node started, and the keys its index holds.
type UpsertStats struct {
	Keys           int64         // live keys in the index
	DeleteFiles    int64         // position-delete files committed
	DeletedRows    int64         // rows they delete
	Rebuilds       int64         // index rebuilds from the table
	RebuildTime    time.Duration // their total duration
	LastRebuildRow int64         // live keyed rows the last rebuild found
	IndexFileBytes int64         // the node's key-index file, shared by its upsert tables
}
