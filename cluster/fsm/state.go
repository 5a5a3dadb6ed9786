package fsm

import (
	"maps"
	"slices"

	"github.com/floe-io/floe/internal/ledger"
)

// Namespace is a catalog namespace and its properties.
type Namespace struct {
	Parts []string          `json:"parts"`
	Props map[string]string `json:"props,omitempty"`
}

// Table is one table of the catalog of record.
type Table struct {
	Ident                    []string `json:"ident"`
	MetadataLocation         string   `json:"metadata_location"`
	PreviousMetadataLocation string   `json:"previous_metadata_location,omitempty"`
	// Commits counts catalog commits of the table; LastCommitAt (unix ms,
	// stamped by the proposer) and LastCommitID describe the newest one.
	Commits      int64  `json:"commits"`
	LastCommitAt int64  `json:"last_commit_at,omitempty"`
	LastCommitID string `json:"last_commit_id,omitempty"`
	// NewestRecordTS is the newest Kafka timestamp (unix ms) committed into
	// the table; freshness is now minus this.
	NewestRecordTS int64 `json:"newest_record_ts,omitempty"`
	// Rows and Files are totals of committed appends, kept for status
	// without reading the table.
	Rows       int64 `json:"rows"`
	Files      int64 `json:"files"`
	DLQRecords int64 `json:"dlq_records"`
	// Synced records, per external catalog name, the metadata location last
	// mirrored there and when.
	Synced map[string]SyncRecord `json:"synced,omitempty"`
	// Delta is the last Delta Lake version recorded by a commit of the
	// table (CommitTables.Delta); nil for a table that never wrote one.
	Delta *ledger.DeltaCommit `json:"delta,omitempty"`
}

// SyncRecord is the last successful sync of a table to one catalog.
type SyncRecord struct {
	MetadataLocation string `json:"metadata_location"`
	At               int64  `json:"at"` // unix ms
}

// Member is a node of the group as the FSM knows it.
type Member struct {
	ID      string            `json:"id"`
	Addr    string            `json:"addr"`          // Raft address
	RPC     string            `json:"rpc,omitempty"` // internal gRPC address
	Admin   string            `json:"admin,omitempty"`
	Attrs   map[string]string `json:"attrs,omitempty"` // "zone", ...
	Version string            `json:"version,omitempty"`
	// Draining members take no new work; their work is moved away.
	Draining bool `json:"draining,omitempty"`
	// DrainedByOperator: the drain mark is an operator's (DrainNode with
	// Operator), not the process's own shutdown: the member's restarted
	// process keeps it, and only an operator's undrain clears it.
	DrainedByOperator bool `json:"drained_by_operator,omitempty"`
	// ProposalIDs: the member's FSM deduplicates proposals by id (State.
	// Proposals). Proposers attach ids only while every member says so: an
	// older member would apply a resend that the others answer from their
	// window, and the replicas would part.
	ProposalIDs bool `json:"proposal_ids,omitempty"`
	// Protocol is the protocol level of the member's build (version.go);
	// absent in the records of builds before it, whose level Level infers.
	// The group's minimum gates which commands may be proposed.
	Protocol int `json:"protocol,omitempty"`
}

// Zone returns the member's zone attribute, empty when not given.
func (m *Member) Zone() string { return m.Attrs["zone"] }

// TopicSource is a Kafka topic that a mapping routes into a table, with the
// partition count last discovered.
type TopicSource struct {
	Topic      string `json:"topic"`
	Table      string `json:"table"` // table key
	Partitions int32  `json:"partitions"`
}

// State is the whole replicated state. Only the FSM mutates it, under its
// lock; readers get it through FSM.Read.
type State struct {
	Namespaces map[string]*Namespace        `json:"namespaces"` // key: TableKey(parts)
	Tables     map[string]*Table            `json:"tables"`     // key: TableKey(ident)
	Ledger     *ledger.Ledger               `json:"ledger"`
	Nodes      map[string]*Member           `json:"nodes"`
	Sources    map[string]*TopicSource      `json:"sources"`    // key: topic
	Committers map[string]ledger.Assignment `json:"committers"` // key: table key
	// Resumes is the resume state of tables an operator resumed (see
	// ResumeTable), by table key; nil until the first resume.
	Resumes map[string]*TableResume `json:"resumes,omitempty"`
	// SchemaRequests are the schema requests of tables not yet applied by
	// their committers, oldest first, by table key (see RequestSchema).
	SchemaRequests map[string][]SchemaRequest `json:"schema_requests,omitempty"`
	// Mappings are the topic mappings made through the admin API, by name.
	Mappings map[string]*Mapping `json:"mappings,omitempty"`
	// Paused maps the tables an operator paused to when (unix ms).
	Paused map[string]int64 `json:"paused,omitempty"`
	// PausedBy maps a paused table to who paused it (PauseTable.By), when
	// the proposer said.
	PausedBy map[string]string `json:"paused_by,omitempty"`
	// Rewinds is the last rewind of each rewound table, by table key.
	Rewinds map[string]*TableRewind `json:"rewinds,omitempty"`
	// Proposals are the results of the last applied proposals that carried
	// a proposal id, so that a resent proposal answers as the first did
	// instead of applying twice; nil until the first one.
	Proposals *ProposalWindow `json:"proposals,omitempty"`
	// LastBackup is the newest state backup the leader reported writing.
	LastBackup *BackupWritten `json:"last_backup,omitempty"`
	// Applied is the index of the last applied log entry.
	Applied uint64 `json:"applied"`
	// Skipped counts commands of unknown type skipped (newer nodes).
	Skipped uint64 `json:"skipped"`
}

// NewState returns an empty state.
func NewState() *State {
	return &State{
		Namespaces: map[string]*Namespace{},
		Tables:     map[string]*Table{},
		Ledger:     ledger.New(),
		Nodes:      map[string]*Member{},
		Sources:    map[string]*TopicSource{},
		Committers: map[string]ledger.Assignment{},
	}
}

// TableKeys returns the table keys in sorted order.
func (s *State) TableKeys() []string {
	return slices.Sorted(maps.Keys(s.Tables))
}
