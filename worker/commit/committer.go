package commit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/control"
)

// State is the replicated state a commit loop reads.
type State interface {
	// Committer returns the holder of a table's committer role.
	Committer(table string) (ledger.Assignment, bool)
	// Pending returns a table's recorded, uncommitted entries, oldest first.
	Pending(table string) []ledger.Entry
	// SchemaRequests returns a table's pending schema requests, oldest first.
	SchemaRequests(table string) []control.SchemaRequest
	// Control returns an operator's replicated control of a table.
	Control(table string) control.TableControl
	// WatchTable returns a channel closed at the next state change that
	// may concern the table: everything above is the table's own, so a
	// table's loop sleeps through changes to the other tables.
	WatchTable(key string) <-chan struct{}
	// Holders returns how many nodes hold partitions that route into the
	// table: that many entries may come of one flush slot (gather.go).
	Holders(table string) int
}

// Proposer answers schema requests: applied (errMsg empty, they go) or
// failed (they stay, carrying errMsg). Fenced by committer.
type Proposer interface {
	SchemaApplied(ctx context.Context, table string, ids []string, errMsg string, committer ledger.Assignment) error
}

// UpsertReporter is what a sink that writes upsert tables may also tell:
// its counters of one table, false when it committed none of it as upsert.
type UpsertReporter interface {
	Upsert(table string) (sink.UpsertStats, bool)
}

// DeadLetterDeltaReporter is what a sink that mirrors dead-letter tables
// to Delta logs may also tell: the version of table's dead-letter log it
// last mirrored, false before the first. Asked on the table's commit
// loop, the goroutine that mirrors it.
type DeadLetterDeltaReporter interface {
	DeadLetterDelta(table string) (version int64, ok bool)
}

// deadLetterDelta reads the dead-letter Delta version of table from s, if
// it has one.
func deadLetterDelta(s Sink, table string) *int64 {
	r, ok := s.(DeadLetterDeltaReporter)
	if !ok {
		return nil
	}
	v, ok := r.DeadLetterDelta(table)
	if !ok {
		return nil
	}
	return &v
}

// upsertStatus reads the upsert counters of table from s, if it has them.
func upsertStatus(s Sink, table string) (*status.UpsertStatus, bool) {
	r, ok := s.(UpsertReporter)
	if !ok {
		return nil, false
	}
	st, ok := r.Upsert(table)
	if !ok {
		return nil, false
	}
	return &status.UpsertStatus{Keys: st.Keys, DeleteFiles: st.DeleteFiles, DeletedRows: st.DeletedRows,
		IndexRebuilds: st.Rebuilds, RebuildSeconds: st.RebuildTime.Seconds(), IndexFileBytes: st.IndexFileBytes}, true
}

// Sink is what a committer asks of the table format. Every call that
// changes the table names the committer role the loop read, and the sink
// fences its commits by it: a node that lost the role is refused with
// ledger.ErrStaleCommitter and cannot change the table behind its
// successor's back.
type Sink interface {
	// EvolveSchema adds a schema request's uncommitted fields as columns,
	// fenced by committer.
	EvolveSchema(ctx context.Context, t sink.TableSpec, shape *records.Shape, committer ledger.Assignment, at time.Time) error
	// Commit commits ledger entries (oldest first) into the table and its
	// dead-letter table as one catalog commit, fenced by committer.
	Commit(ctx context.Context, table string, entries []ledger.Entry, committer ledger.Assignment, at time.Time) error
	// Expire removes old snapshots and returns how many went, fenced by
	// committer.
	Expire(ctx context.Context, table string, maxAge time.Duration, maxCount int, now time.Time, committer ledger.Assignment) (int, error)
	// CleanOrphans deletes unreferenced files older than minAge, sparing
	// those keep names, as committer. It commits nothing, so the sink
	// fences the deletion itself (a read barrier and the role re-checked
	// just before it) and refuses with ledger.ErrStaleCommitter when the
	// role moved. The loop runs it in the background, beside its commits.
	CleanOrphans(ctx context.Context, table string, minAge time.Duration, keep map[string]bool, committer ledger.Assignment) (int, int64, error)
	// PlanRewrite plans and writes a compaction, committing nothing.
	PlanRewrite(ctx context.Context, table string, p sink.CompactionPolicy) (sink.Rewrite, error)
	// CommitRewrite commits a planned rewrite on top of the latest
	// snapshot, fenced by committer.
	CommitRewrite(ctx context.Context, table string, rw sink.Rewrite, committer ledger.Assignment, at time.Time) error
	// DeleteFrom deletes the rows at or after the given offsets, as the
	// replace delete of rewind gen, fenced by committer.
	DeleteFrom(ctx context.Context, table string, from map[ledger.TopicPartition]int64, gen uint64, committer ledger.Assignment, at time.Time) (int64, error)
	// Settle brings what follows a table's commits level with its
	// committed state (the dead-letter table's Delta log), as committer:
	// after a restart, a failover or a follow-up that failed after its
	// commit. Cheap when level: the loop calls it every round.
	Settle(ctx context.Context, table string, committer ledger.Assignment, at time.Time) error
}

// Lookup returns the spec and mapping of a table some mapping routes into;
// ok is false when none does (any more).
type Lookup func(table string) (spec sink.TableSpec, m config.Table, ok bool)

// Config is what the commit loops need of the node's configuration;
// worker.Config documents each field and sets the defaults.
type Config struct {
	NodeID         string
	CommitInterval time.Duration
	TargetFileSize config.ByteSize
	ExpireInterval time.Duration
	OrphanInterval time.Duration
	OnCommit       func(table string, d time.Duration)
}

// ErrNotCommitter: the table's committer role is held by another node.
var ErrNotCommitter = errors.New("this node does not commit the table")

// ErrCompactionDisabled: maintenance on demand of a table whose mapping
// disables compaction, asked without force.
var ErrCompactionDisabled = errors.New("compaction is disabled for the table")

// ErrUnknownTable: no mapping routes into the table.
var ErrUnknownTable = errors.New("no mapping writes this table")

// Committer runs the commit loops of one node.
type Committer struct {
	cfg    Config
	state  State
	prop   Proposer
	sink   Sink
	lookup Lookup
	status *status.Tracker
	log    *slog.Logger

	mu       sync.Mutex
	maintain map[string]chan maintainReq // per table: maintenance on demand
}

// New returns a committer; Run starts a table's loop.
func New(cfg Config, st State, prop Proposer, s Sink, lookup Lookup, tracker *status.Tracker, log *slog.Logger) *Committer {
	return &Committer{cfg: cfg, state: st, prop: prop, sink: s, lookup: lookup, status: tracker, log: log,
		maintain: map[string]chan maintainReq{}}
}

// maintainChan returns the channel a table's loop takes maintenance
// requests on, made by whichever asks first.
func (c *Committer) maintainChan(table string) chan maintainReq {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.maintain[table]
	if !ok {
		ch = make(chan maintainReq)
		c.maintain[table] = ch
	}
	return ch
}

// Maintain runs a table's maintenance now (expiry, orphan cleanup and a
// compaction that ignores the hot-table bound and the window), in its
// commit loop so it serializes with appends, and reports what it did. The
// caller checks that the table has a loop. A table whose mapping disables
// compaction is refused (ErrCompactionDisabled) unless force.
func (c *Committer) Maintain(ctx context.Context, table string, force bool) (MaintenanceResult, error) {
	req := maintainReq{force: force, reply: make(chan maintainReply, 1)}
	select {
	case c.maintainChan(table) <- req:
	case <-ctx.Done():
		return MaintenanceResult{}, ctx.Err()
	}
	select {
	case r := <-req.reply:
		return r.res, r.err
	case <-ctx.Done():
		return MaintenanceResult{}, ctx.Err()
	}
}

// update runs fn on a table's status.
func (c *Committer) update(table string, fn func(*status.TableStatus)) {
	c.status.Update(table, ledger.DisplayName(table), fn)
}

// unknown is ErrUnknownTable naming the table.
func unknown(table string) error {
	return fmt.Errorf("%w: %s", ErrUnknownTable, ledger.DisplayName(table))
}
