package cluster

import (
	"context"
	"io"
	"log/slog"

	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/cluster/recovery"
)

// The names callers used before the split, as aliases of the subpackages'
// own: a caller may keep importing cluster, or import the subpackage.

// The replicated state and its commands (package fsm).
type (
	State               = fsm.State
	Member              = fsm.Member
	Namespace           = fsm.Namespace
	Table               = fsm.Table
	SyncRecord          = fsm.SyncRecord
	TopicSource         = fsm.TopicSource
	Command             = fsm.Command
	CommandType         = fsm.CommandType
	Assign              = fsm.Assign
	BackupWritten       = fsm.BackupWritten
	CatalogSynced       = fsm.CatalogSynced
	CommitTables        = fsm.CommitTables
	CommitterAssignment = fsm.CommitterAssignment
	CreateNamespace     = fsm.CreateNamespace
	CreateTable         = fsm.CreateTable
	DeleteMapping       = fsm.DeleteMapping
	DrainNode           = fsm.DrainNode
	DropNamespace       = fsm.DropNamespace
	DropTable           = fsm.DropTable
	Mapping             = fsm.Mapping
	PartitionAssignment = fsm.PartitionAssignment
	PauseTable          = fsm.PauseTable
	PutMapping          = fsm.PutMapping
	RecordFiles         = fsm.RecordFiles
	RegisterNode        = fsm.RegisterNode
	RegisterSources     = fsm.RegisterSources
	RemoveNode          = fsm.RemoveNode
	RequestSchema       = fsm.RequestSchema
	RestoreState        = fsm.RestoreState
	ResumeSkip          = fsm.ResumeSkip
	ResumeTable         = fsm.ResumeTable
	RewindPosition      = fsm.RewindPosition
	RewindTable         = fsm.RewindTable
	SchemaApplied       = fsm.SchemaApplied
	SchemaRequest       = fsm.SchemaRequest
	TableResume         = fsm.TableResume
	TableRewind         = fsm.TableRewind
	TableSwap           = fsm.TableSwap
	UpdateNamespace     = fsm.UpdateNamespace
)

// Command types (package fsm); append only.
const (
	CmdRegisterNode    = fsm.CmdRegisterNode
	CmdCreateNamespace = fsm.CmdCreateNamespace
	CmdDropNamespace   = fsm.CmdDropNamespace
	CmdUpdateNamespace = fsm.CmdUpdateNamespace
	CmdCreateTable     = fsm.CmdCreateTable
	CmdDropTable       = fsm.CmdDropTable
	CmdRecordFiles     = fsm.CmdRecordFiles
	CmdCommitTables    = fsm.CmdCommitTables
	CmdRegisterSources = fsm.CmdRegisterSources
	CmdAssign          = fsm.CmdAssign
	CmdDrainNode       = fsm.CmdDrainNode
	CmdRemoveNode      = fsm.CmdRemoveNode
	CmdRestoreState    = fsm.CmdRestoreState
	CmdCatalogSynced   = fsm.CmdCatalogSynced
	CmdBackupWritten   = fsm.CmdBackupWritten
	CmdResumeTable     = fsm.CmdResumeTable
	CmdRequestSchema   = fsm.CmdRequestSchema
	CmdSchemaApplied   = fsm.CmdSchemaApplied
	CmdPutMapping      = fsm.CmdPutMapping
	CmdDeleteMapping   = fsm.CmdDeleteMapping
	CmdPauseTable      = fsm.CmdPauseTable
	CmdRewindTable     = fsm.CmdRewindTable
)

// SnapshotVersion is the format version of FSM snapshots and state backups.
const SnapshotVersion = fsm.SnapshotVersion

// FSM is the replicated state machine a node reads (Node.FSM).
type FSM = fsm.FSM

// The Raft node (package raftnode).
type (
	Node         = raftnode.Node
	NodeConfig   = raftnode.NodeConfig
	Observer     = raftnode.Observer
	MemberHealth = raftnode.MemberHealth
)

// The catalog of record (package catalog) and the state backup (package
// recovery).
type (
	Catalog = catalog.Catalog
	Backup  = recovery.Backup
)

// Sentinels, the same values as the subpackages', so errors.Is answers
// alike whichever package a caller names.
var (
	ErrStaleCommitter    = fsm.ErrStaleCommitter
	ErrUnsupported       = fsm.ErrUnsupported
	ErrSnapshotVersion   = fsm.ErrSnapshotVersion
	ErrUnknownNode       = fsm.ErrUnknownNode
	ErrNotEmpty          = fsm.ErrNotEmpty
	ErrNoSuchMapping     = fsm.ErrNoSuchMapping
	ErrMappingExists     = fsm.ErrMappingExists
	ErrStaleRewind       = fsm.ErrStaleRewind
	ErrNotLeader         = raftnode.ErrNotLeader
	ErrRaftShutdownLocal = raftnode.ErrRaftShutdownLocal
	ErrNotMember         = raftnode.ErrNotMember
	ErrNoBackup          = recovery.ErrNoBackup
)

// NewState returns an empty state.
func NewState() *State { return fsm.NewState() }

// Encode frames a command as its type byte followed by its JSON payload.
func Encode(c Command) ([]byte, error) { return fsm.Encode(c) }

// DecodeSnapshot reads and validates a snapshot or state backup.
func DecodeSnapshot(r io.Reader) (*State, error) { return fsm.DecodeSnapshot(r) }

// DLQKey is the key of a table's dead-letter table.
func DLQKey(tableKey string) string { return fsm.DLQKey(tableKey) }

// Open starts a Raft member (raftnode.Open).
func Open(cfg NodeConfig) (*Node, error) { return raftnode.Open(cfg) }

// IsRetryable is the one classifier of cluster errors (raftnode.IsRetryable).
func IsRetryable(err error) bool { return raftnode.IsRetryable(err) }

// NewCatalog returns the catalog of record on node (catalog.New).
func NewCatalog(node *Node, warehouse string, props iceberg.Properties) *Catalog {
	return catalog.New(replica{node}, warehouse, props)
}

// BackupLocation is where the state backup of a warehouse lives.
func BackupLocation(warehouse string) string { return recovery.BackupLocation(warehouse) }

// EncodeBackup serializes a state as a versioned snapshot envelope.
func EncodeBackup(s *State) ([]byte, error) { return recovery.EncodeBackup(s) }

// NewBackup returns a backup writer of f into warehouse (recovery.NewBackup).
func NewBackup(f *FSM, warehouse string, props iceberg.Properties, log *slog.Logger) *Backup {
	return recovery.NewBackup(f, warehouse, props, log)
}

// Recover reads the state backup of warehouse and returns the state a new
// cluster starts from (recovery.Recover).
func Recover(ctx context.Context, warehouse string, props iceberg.Properties, log *slog.Logger) (*State, error) {
	return recovery.Recover(ctx, warehouse, props, log)
}

// ReadBackup reads and validates the state backup of a warehouse
// (recovery.ReadBackup).
func ReadBackup(ctx context.Context, warehouse string, props iceberg.Properties) (*State, error) {
	return recovery.ReadBackup(ctx, warehouse, props)
}
