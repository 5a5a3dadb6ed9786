package fsm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/floe-io/floe/internal/ledger"
)

// CommandType tags a Raft log entry. The enum is append-only: a value, once
// released, keeps its meaning forever, and removed commands leave a gap.
type CommandType uint8

const (
	CmdRegisterNode    CommandType = 1
	CmdCreateNamespace CommandType = 2
	CmdDropNamespace   CommandType = 3
	CmdUpdateNamespace CommandType = 4
	CmdCreateTable     CommandType = 5
	CmdDropTable       CommandType = 6
	CmdRecordFiles     CommandType = 7
	CmdCommitTables    CommandType = 8
	CmdRegisterSources CommandType = 9
	CmdAssign          CommandType = 10
	CmdDrainNode       CommandType = 11
	CmdRemoveNode      CommandType = 12
	CmdRestoreState    CommandType = 13
	CmdCatalogSynced   CommandType = 14
	CmdBackupWritten   CommandType = 15
	CmdResumeTable     CommandType = 16
	CmdRequestSchema   CommandType = 17
	CmdSchemaApplied   CommandType = 18
	CmdPutMapping      CommandType = 19
	CmdDeleteMapping   CommandType = 20
	CmdPauseTable      CommandType = 21
	CmdRewindTable     CommandType = 22
	// Next: 23. Never reuse a number.
)

// Command is implemented by every command payload.
type Command interface {
	Type() CommandType
}

// RegisterNode adds or updates a member.
type RegisterNode struct {
	Node Member `json:"node"`
}

// CreateNamespace creates a namespace; creating an existing one with
// IfNotExists set is not an error.
type CreateNamespace struct {
	Parts       []string          `json:"parts"`
	Props       map[string]string `json:"props,omitempty"`
	IfNotExists bool              `json:"if_not_exists,omitempty"`
}

// DropNamespace drops an empty namespace.
type DropNamespace struct {
	Parts []string `json:"parts"`
}

// UpdateNamespace removes and sets namespace properties.
type UpdateNamespace struct {
	Parts    []string          `json:"parts"`
	Removals []string          `json:"removals,omitempty"`
	Updates  map[string]string `json:"updates,omitempty"`
}

// CreateTable registers a table whose first metadata file is written.
type CreateTable struct {
	Ident            []string `json:"ident"`
	MetadataLocation string   `json:"metadata_location"`
}

// contentLevel: a table whose metadata file is gzip-compressed needs every
// member able to read it.
func (c CreateTable) contentLevel() int { return metadataLevel(c.MetadataLocation) }

// metadataLevel is the protocol level a node needs to read the metadata
// file at loc: gzip files (the spec's name for them, or Java's alternative)
// need ProtocolGzipMetadata.
func metadataLevel(loc string) int {
	if strings.HasSuffix(loc, ".gz.metadata.json") || strings.HasSuffix(loc, ".metadata.json.gz") {
		return ProtocolGzipMetadata
	}
	return ProtocolBase
}

// DropTable forgets a table, its offsets and ledger entries. Its files stay.
type DropTable struct {
	Ident []string `json:"ident"`
}

// RecordFiles adds one ledger entry to a table.
type RecordFiles struct {
	Table string       `json:"table"`
	Entry ledger.Entry `json:"entry"`
}

// TableSwap compare-and-swaps one table's metadata pointer.
type TableSwap struct {
	Table    string `json:"table"`
	Expected string `json:"expected"`
	New      string `json:"new"`
}

// CommitTables is one catalog commit: every swap applies or none does. When
// Table is set it is also a ledger commit: the oldest pending entries of that
// table named by Entries are removed and their partitions' committed offsets
// advance. Committer fences the commit by the table's committer epoch.
type CommitTables struct {
	Swaps     []TableSwap        `json:"swaps"`
	Table     string             `json:"table,omitempty"`
	Entries   []string           `json:"entries,omitempty"`
	Committer *ledger.Assignment `json:"committer,omitempty"`
	CommitID  string             `json:"commit_id,omitempty"`
	At        int64              `json:"at"` // unix ms, stamped by the proposer
	// RewindGen, when set, marks this commit as the replace delete of the
	// table's rewind of that generation (see RewindTable); DeletedRows is
	// how many rows it removed.
	RewindGen   uint64 `json:"rewind_gen,omitempty"`
	DeletedRows int64  `json:"deleted_rows,omitempty"`
	// Delta, on an append of a table that also writes a Delta Lake log,
	// is the Delta version the committer published for it: the sequence
	// must be one past the table's last, so no version is skipped or
	// recorded twice. Omitted when nil (level-3 bytes unchanged).
	Delta *ledger.DeltaCommit `json:"delta,omitempty"`
}

// contentLevel: a commit that records a Delta version needs every member to
// record it too (an older build would drop it, and its snapshots with it,
// and later refuse or accept the next sequence unlike the others). A
// table's formats name delta only through a level-4 mapping, but a
// configuration file's tables are not gated: this refuses their Delta
// commits, retryably, until the rolling upgrade is done.
//
// A swap to a gzip-compressed metadata file needs every member able to read
// it (the catalog writes one only then; this catches a member that
// registered in between).
func (c CommitTables) contentLevel() int {
	level := ProtocolBase
	if c.Delta != nil {
		level = ProtocolTableSettings
	}
	for _, s := range c.Swaps {
		level = max(level, metadataLevel(s.New))
	}
	return level
}

// RegisterSources records the topics routed into tables and their partition
// counts as discovered in Kafka.
type RegisterSources struct {
	Sources []TopicSource `json:"sources"`
}

// PartitionAssignment assigns one partition.
type PartitionAssignment struct {
	ledger.TopicPartition
	ledger.Assignment
}

// CommitterAssignment gives one table a committer.
type CommitterAssignment struct {
	Table string `json:"table"`
	ledger.Assignment
}

// Assign is the assignment controller's decision: partitions and committer
// roles with their epochs.
type Assign struct {
	Partitions []PartitionAssignment `json:"partitions,omitempty"`
	Committers []CommitterAssignment `json:"committers,omitempty"`
}

// DrainNode marks a member as draining (it takes no new work and the
// assignment controller moves its partitions and committer roles away) or
// clears the mark.
type DrainNode struct {
	ID       string `json:"id"`
	Draining bool   `json:"draining"`
	// Operator: an operator set the mark (the admin API), so it outlives
	// the member's process (Member.DrainedByOperator). Needs
	// ProtocolOperatorDrain: an older member would drop the field.
	Operator bool `json:"operator,omitempty"`
}

func (c DrainNode) contentLevel() int {
	if c.Operator {
		return ProtocolOperatorDrain
	}
	return ProtocolBase
}

// RemoveNode forgets a member that left or was removed as failed. Its
// partitions and committer roles move at the next assignment.
type RemoveNode struct {
	ID string `json:"id"`
}

// RestoreState installs a state recovered from the object store into a new,
// empty cluster (floe serve --recover). It is refused once any table exists,
// so replaying it can never roll a live cluster back.
type RestoreState struct {
	State *State `json:"state"`
}

// CatalogSynced records that a table's committer mirrored the table to an
// external catalog (Glue, a REST catalog) at a metadata location, so that
// after the committer moves the next one resumes from there and never syncs
// the table backwards. Fenced by the committer epoch.
type CatalogSynced struct {
	Table            string             `json:"table"`
	Catalog          string             `json:"catalog"`
	MetadataLocation string             `json:"metadata_location"`
	Committer        *ledger.Assignment `json:"committer,omitempty"`
	At               int64              `json:"at"` // unix ms, stamped by the proposer
}

// BackupWritten records that the leader wrote the state backup to the
// warehouse, so that every node can show its age (an alert condition).
type BackupWritten struct {
	Location string `json:"location"`
	Applied  uint64 `json:"applied"` // the state's applied index in the backup
	At       int64  `json:"at"`      // unix ms, stamped by the proposer
}

func (CatalogSynced) Type() CommandType   { return CmdCatalogSynced }
func (BackupWritten) Type() CommandType   { return CmdBackupWritten }
func (DrainNode) Type() CommandType       { return CmdDrainNode }
func (RemoveNode) Type() CommandType      { return CmdRemoveNode }
func (RestoreState) Type() CommandType    { return CmdRestoreState }
func (RegisterNode) Type() CommandType    { return CmdRegisterNode }
func (CreateNamespace) Type() CommandType { return CmdCreateNamespace }
func (DropNamespace) Type() CommandType   { return CmdDropNamespace }
func (UpdateNamespace) Type() CommandType { return CmdUpdateNamespace }
func (CreateTable) Type() CommandType     { return CmdCreateTable }
func (DropTable) Type() CommandType       { return CmdDropTable }
func (RecordFiles) Type() CommandType     { return CmdRecordFiles }
func (CommitTables) Type() CommandType    { return CmdCommitTables }
func (RegisterSources) Type() CommandType { return CmdRegisterSources }
func (Assign) Type() CommandType          { return CmdAssign }

// Encode frames a command as its type byte followed by its JSON payload,
// for a group whose members are all at this build's level (the ignorable
// bit set as the command table says). Proposers use EncodeFor with the
// group's level.
func Encode(c Command) ([]byte, error) { return EncodeFor(ProtocolLevel, "", c) }

func encodePlain(c Command) ([]byte, error) {
	body, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", c.Type(), err)
	}
	return append([]byte{byte(c.Type())}, body...), nil
}
