package status

import "time"

// Report is a node's view of every table.
type Report struct {
	Node   string `json:"node"`
	Leader string `json:"leader"`
	// LeaderAddr is the leader's admin address and LeaderSince when this
	// node saw the leader change last; both may be empty.
	LeaderAddr  string    `json:"leader_admin_addr,omitempty"`
	LeaderSince time.Time `json:"leader_since,omitzero"`
	RaftState   string    `json:"raft_state"`
	// State is the node's own state: empty while it applies the Raft log,
	// NodeUpgradeRequired once it met an entry its build does not know (a
	// problem "upgrade" says which).
	State       string            `json:"state,omitempty"`
	GeneratedAt time.Time         `json:"generated_at"`
	Problems    map[string]string `json:"problems,omitempty"`
	Members     []MemberReport    `json:"members,omitempty"`
	// AppliedIndex is the last Raft entry this node applied; SkippedCommands
	// counts entries of command types this build does not know (written by
	// newer nodes during a rolling upgrade) that it skipped.
	AppliedIndex    uint64 `json:"applied_index"`
	SkippedCommands uint64 `json:"skipped_commands"`
	// Backup is the newest state backup in the warehouse (for recovery from
	// the loss of every node); nil before the first.
	Backup *BackupReport `json:"backup,omitempty"`
	// Memory is the node's memory budget: the bytes of records it holds
	// (fetched and not yet recorded) and the limit they are held to; nil
	// before the worker runs.
	Memory *MemoryReport `json:"memory,omitempty"`
	// Brokers is what this node's partition readers saw of the Kafka
	// brokers they talked to: each one's health (source health).
	Brokers []BrokerStatus `json:"brokers,omitempty"`
	Tables  []TableReport  `json:"tables"`
	// Summary counts the tables before a selection narrowed Tables
	// (selection.go): every table, those matched, and each state's.
	// Set by the admin API's GET /v1/status; nil where a report is built
	// for other uses.
	Summary *TableSummary `json:"table_summary,omitempty"`
	// Cluster is set on a cluster-wide report (MergeCluster): the nodes
	// it joins and those that did not answer. Nil on one node's report.
	Cluster *ClusterScope `json:"cluster,omitempty"`
}

// BrokerStatus is one Kafka broker as this node's readers saw it: up, or
// down since when and why, and when it last answered.
type BrokerStatus struct {
	Addr         string    `json:"addr"`
	NodeID       int32     `json:"node_id"` // -1: known only as a bootstrap server
	Up           bool      `json:"up"`
	Since        time.Time `json:"down_since,omitzero"`
	LastResponse time.Time `json:"last_response,omitzero"`
	Reason       string    `json:"reason,omitempty"`
	// Partitions is how many partitions read on this node it leads.
	Partitions int `json:"partitions"`
}

// NodeUpgradeRequired is Report.State of a node that stopped applying the
// Raft log at a command its build does not know: its state is frozen there
// until it is restarted on a newer build.
const NodeUpgradeRequired = "UPGRADE_REQUIRED"

// MemoryReport is the node's memory budget at the time of the report.
type MemoryReport struct {
	HeldBytes  int64 `json:"held_bytes"`
	LimitBytes int64 `json:"limit_bytes"`
	// BudgetBytes is the node's whole memory_budget, of which LimitBytes
	// is the records' share (the rest is for fetches and what the budget
	// does not see: docs/internals.md, "Memory budget").
	BudgetBytes int64 `json:"budget_bytes,omitempty"`
}

// BackupReport describes the newest state backup.
type BackupReport struct {
	Location     string    `json:"location"`
	At           time.Time `json:"at"`
	AgeSec       float64   `json:"age_sec"`
	AppliedIndex uint64    `json:"applied_index"`
}

// MemberReport is one node of the Raft group. Health is judged by the
// leader; other nodes report every member healthy.
type MemberReport struct {
	ID       string `json:"id"`
	Role     string `json:"role"` // leader, voter or nonvoter
	Zone     string `json:"zone,omitempty"`
	Version  string `json:"version,omitempty"`
	Healthy  bool   `json:"healthy"`
	Draining bool   `json:"draining,omitempty"`
	// UpgradeRequired: the member stopped applying the Raft log at a
	// command its build does not know (as the leader knows, or the member
	// itself); it takes no work until restarted on a newer build.
	UpgradeRequired bool `json:"upgrade_required,omitempty"`
	// StorageFailing: the member cannot write its Raft log (a full disk);
	// it takes no work until it can.
	StorageFailing bool `json:"storage_failing,omitempty"`
	// ClockSkewed: the member's wall clock has stayed more than 30 s off
	// the group's median (the leader's reading, ClockOffset seconds); it
	// takes no work until it agrees again.
	ClockSkewed bool    `json:"clock_skewed,omitempty"`
	ClockOffset float64 `json:"clock_offset_sec,omitempty"`
	Partitions  int     `json:"partitions"`
	Committers  int     `json:"committers"`
	Unreachable float64 `json:"unreachable_sec,omitempty"`
}

// TableReport is one table's status.
// DeltaReport is the Delta log version and commit sequence (its txn
// version) that the table's last recorded Delta commit published.
type DeltaReport struct {
	Version  int64 `json:"version"`
	Sequence int64 `json:"sequence"`
}

type TableReport struct {
	Table            string    `json:"table"`
	State            string    `json:"state"`
	Reason           string    `json:"reason,omitempty"`
	Rows             int64     `json:"rows"`
	DataFiles        int64     `json:"data_files"`
	DeadLetterRows   int64     `json:"dead_letter_rows"`
	Snapshots        int       `json:"snapshots"`
	Commits          int64     `json:"commits"` // catalog commits: appends, compactions, expiry, schema and spec changes
	MetadataLocation string    `json:"metadata_location"`
	LastCommit       time.Time `json:"last_commit,omitzero"`
	LastCommitAgeSec float64   `json:"last_commit_age_seconds"`
	FreshnessSec     float64   `json:"freshness_seconds"` // now minus newest committed record timestamp
	PendingEntries   int       `json:"pending_ledger_entries"`
	Activity                   // what this node did for the table since it started
	Committer        string    `json:"committer,omitempty"`
	DataBytes        int64     `json:"data_bytes"`
	AvgFileBytes     int64     `json:"avg_file_bytes"`
	// ObjectRequests: requests this node made for the table's objects
	// (s3:// warehouses; internal/objstore), by billing class.
	ObjectRequests ObjectRequests    `json:"object_requests"`
	Partitions     []PartitionReport `json:"partitions"`
	SuspendedAt    *SuspendedRecord  `json:"suspended_at,omitempty"` // the bad record a suspended table stopped at
	// Catalogs is the table's one-way sync to each external catalog.
	Catalogs []CatalogReport `json:"catalogs,omitempty"`
	// Formats are the table formats its committer writes (the mapping's;
	// [iceberg] by default). Delta is the Delta log's state as of the last
	// commit that recorded one; nil when the table never wrote one.
	Formats []string     `json:"formats,omitempty"`
	Delta   *DeltaReport `json:"delta,omitempty"`
	// Paused: an operator paused the table (PauseTable) and it has not
	// been resumed.
	Paused bool `json:"paused,omitempty"`
	// PausedBy is who paused it (the admin caller: cert:<subject> or
	// token:<fingerprint>), when known.
	PausedBy string `json:"paused_by,omitempty"`
	// Rewind is the table's last rewind, nil if never rewound.
	Rewind       *RewindReport `json:"rewind,omitempty"`
	NodeCommits  int64         `json:"node_commits"`
	PendingBytes int64         `json:"pending_ledger_bytes"`
	// Lag is the records in Kafka not yet committed, summed over the
	// table's partitions; LagSec the largest partition's lag in time.
	Lag    int64   `json:"lag"`
	LagSec float64 `json:"lag_seconds"`

	// MetadataBytesWritten: bytes of metadata files (metadata.json,
	// manifest lists, manifests) this node uploaded for the table since it
	// started (s3:// warehouses; internal/objstore), beside BytesWritten
	// (data) and BytesRewritten (compaction).
	MetadataBytesWritten int64 `json:"metadata_bytes_written"`
}

// CatalogReport is one table's sync to one external catalog (Glue, a REST
// catalog). The synced location and time are replicated, so every node
// shows them; errors and failure counts are known only on the table's
// committer, which runs the sync.
type CatalogReport struct {
	Catalog string `json:"catalog"`
	// MetadataLocation is what the catalog was last pointed at.
	MetadataLocation string    `json:"metadata_location,omitempty"`
	LastSync         time.Time `json:"last_sync,omitzero"`
	// InSync: the catalog points at the table's current metadata.
	InSync bool `json:"in_sync"`
	// LagSec is how long the catalog has been behind the table (0 when in
	// sync): on the committer since it first saw the table ahead, on other
	// nodes since the table's last commit.
	LagSec      float64   `json:"lag_seconds"`
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	Syncs       int64     `json:"syncs"`
	Failures    int64     `json:"failures"`
}

// SuspendedRecord is where and why a table suspended (error mode suspend).
type SuspendedRecord struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Error     string `json:"error"`
}

// PartitionReport is one partition of a table.
type PartitionReport struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	Start         int64  `json:"start"`
	Committed     int64  `json:"committed"` // next offset after the committed ones
	Recorded      int64  `json:"recorded"`  // ledger end
	HighWatermark int64  `json:"high_watermark"`
	Lag           int64  `json:"lag"` // records in Kafka not yet committed
	// LagSec is how far behind in time the committed position is: 0 when
	// caught up, else now minus the newest committed record's timestamp.
	LagSec    float64 `json:"lag_seconds"`
	Node      string  `json:"node,omitempty"`
	Epoch     uint64  `json:"epoch,omitempty"`
	LastError string  `json:"last_error,omitempty"`
	// Leader is the broker leading the partition and FetchAgeSec the
	// seconds since it last answered the node reading it (on that node
	// only).
	Leader      string  `json:"leader,omitempty"`
	FetchAgeSec float64 `json:"fetch_age_seconds,omitempty"`
	// Held says why the node the partition is assigned to does not read
	// it (draining, suspended, paused, topic paused); empty while read.
	Held string `json:"held,omitempty"`
}

// RewindReport describes a table's last rewind.
type RewindReport struct {
	Generation  uint64            `json:"generation"`
	Policy      string            `json:"policy"`
	At          time.Time         `json:"at"`
	From        []PartitionOffset `json:"from"` // committed offsets before
	To          []PartitionOffset `json:"to"`
	ReplaceDone bool              `json:"replace_done,omitempty"`
	// By is who asked for the rewind, when known.
	By string `json:"by,omitempty"`
	// Describe says what the rewind means for the table's rows.
	Describe string `json:"describe"`
}

// PartitionOffset is an offset of one topic-partition.
type PartitionOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// ObjectRequests counts object store requests by S3 billing class since the
// node started.
type ObjectRequests struct {
	Put    int64 `json:"put"`    // PUT, COPY, POST, multipart steps
	Get    int64 `json:"get"`    // GET, HEAD
	List   int64 `json:"list"`   // LIST
	Delete int64 `json:"delete"` // DELETE (free on S3), batch deletes, aborted uploads
}
