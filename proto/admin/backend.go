package admin

import (
	"context"
	"errors"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
)

// Sentinel errors a Backend returns (wrapped with context); the API maps
// them to gRPC codes and HTTP statuses.
var (
	// ErrInvalid: the request is malformed; the message names the field
	// (InvalidArgument, 400).
	ErrInvalid = errors.New("invalid request")
	// ErrNotFound: the named mapping, table or member does not exist
	// (NotFound, 404).
	ErrNotFound = errors.New("not found")
	// ErrExists: a mapping of that name exists with other content
	// (AlreadyExists, 409).
	ErrExists = errors.New("already exists")
	// ErrConflict: the state does not allow the operation now, e.g.
	// updating a mapping that comes from a configuration file, resuming
	// with skip a table that is not suspended (FailedPrecondition, 400).
	ErrConflict = errors.New("failed precondition")
	// ErrUnavailable: no leader, or the cluster cannot take writes now;
	// retry later (Unavailable, 503).
	ErrUnavailable = errors.New("unavailable")
	// ErrUpgradeRequired marks, beside one of the above, an answer that a
	// rolling upgrade explains: a member's build is too old for the
	// request, or this node's build is too old for the Raft log. The
	// answer carries a google.rpc.ErrorInfo with reason UpgradeReason,
	// over gRPC and in the HTTP body's details. Wrap with UpgradeError.
	ErrUpgradeRequired = errors.New("upgrade required")
)

// UpgradeReason is the ErrorInfo reason (domain ErrorDomain) of an answer
// that a rolling upgrade explains, the same word as the node state in
// GET /v1/status.
const (
	UpgradeReason = "UPGRADE_REQUIRED"
	ErrorDomain   = "floe.io"
)

// UpgradeError marks Err as ErrUpgradeRequired without changing its text.
type UpgradeError struct{ Err error }

func (e UpgradeError) Error() string   { return e.Err.Error() }
func (e UpgradeError) Unwrap() []error { return []error{ErrUpgradeRequired, e.Err} }

// Backend is what the admin API needs from the node; cmd/floe implements
// it. Reads answer from the node's local replicated state; writes are
// forwarded to the Raft leader by the node and return the index they
// committed at.
type Backend interface {
	Source

	// TransferLeadership hands leadership to voter id (any when empty).
	TransferLeadership(ctx context.Context, id string) (WriteResult, error)
	// DrainNode marks a member draining, UndrainNode clears an operator's
	// mark; RemoveNode removes it.
	DrainNode(ctx context.Context, id string) (WriteResult, error)
	UndrainNode(ctx context.Context, id string) (WriteResult, error)
	RemoveNode(ctx context.Context, id string) (WriteResult, error)

	// Mappings lists API and configuration mappings, by name.
	Mappings(ctx context.Context) ([]Mapping, error)
	// PutMapping creates (create true) or replaces a mapping made through
	// the API. The backend validates it (ErrInvalid naming the field).
	// Creating an identical mapping returns Unchanged; a different one
	// under the same name is ErrExists; updating a missing one ErrNotFound.
	PutMapping(ctx context.Context, m Mapping, create bool) (WriteResult, error)
	DeleteMapping(ctx context.Context, name string) (WriteResult, error)

	// PauseTable and ResumeTable act on table namespace.name.
	PauseTable(ctx context.Context, table string) (WriteResult, error)
	ResumeTable(ctx context.Context, table string, skip bool) (WriteResult, error)
	// RewindTable moves a table's positions; see RewindRequest.
	RewindTable(ctx context.Context, req RewindRequest) (RewindResult, error)
	// Snapshots lists a table's snapshots, oldest first.
	Snapshots(ctx context.Context, table string) ([]SnapshotInfo, error)
	// Samples are the table's samples over the last hour, oldest first:
	// the console's charts (status.History).
	Samples(table string) []status.Sample
	// DeadLetters are the newest rows (at most limit) of the table's
	// dead-letter table; the console shows them to admins only.
	DeadLetters(ctx context.Context, table string, limit int) ([]DeadLetter, error)
	// TableLayout is the table's schema, partition spec and mapping
	// (layout.go).
	TableLayout(ctx context.Context, table string) (TableLayout, error)
}

// WriteResult answers a write.
type WriteResult struct {
	// Index is the Raft index the write committed at; 0 with Unchanged.
	Index     uint64 `json:"raft_index"`
	Unchanged bool   `json:"unchanged,omitempty"`
	Message   string `json:"message,omitempty"`
}

// Mapping sources.
const (
	MappingFromAPI    = "api"
	MappingFromConfig = "config"
)

// Mapping is a named topic mapping.
type Mapping struct {
	Name string `json:"name"`
	// Source is MappingFromAPI or MappingFromConfig (read only).
	Source string       `json:"source"`
	Table  config.Table `json:"table"`
}

// Replay policies of a rewind.
const (
	ReplayAppend  = "append"
	ReplayReplace = "replace"
)

// RewindRequest says where to move a table's partitions: exactly one of
// Earliest, Latest, Timestamp (non-zero) or Offsets.
type RewindRequest struct {
	Table     string
	Earliest  bool
	Latest    bool
	Timestamp time.Time
	Offsets   []status.PartitionOffset // partitions not named stay
	Policy    string                   // ReplayAppend or ReplayReplace
}

// RewindResult answers a rewind.
type RewindResult struct {
	Index  uint64              `json:"raft_index"`
	Rewind status.RewindReport `json:"rewind"`
}

// SnapshotInfo is one Iceberg snapshot of a table.
type SnapshotInfo struct {
	ID           int64             `json:"snapshot_id"`
	ParentID     int64             `json:"parent_snapshot_id,omitempty"`
	Sequence     int64             `json:"sequence_number"`
	At           time.Time         `json:"timestamp"`
	Operation    string            `json:"operation"`
	ManifestList string            `json:"manifest_list"`
	Summary      map[string]string `json:"summary,omitempty"`
	Current      bool              `json:"current,omitempty"`
}
