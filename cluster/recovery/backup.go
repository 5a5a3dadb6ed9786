package recovery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/floe-io/floe/cluster/fsm"
)

// A state backup is the replicated state written to the object store next
// to the tables, so a cluster that lost every Raft disk at once (all ECS
// tasks replaced on ephemeral storage) can start again from it (Recover).
// It is the FSM snapshot envelope, byte for byte, led by its format version
// ({"version":1,...}, fsm.SnapshotVersion): the same version rules apply
// and DecodeBackup reads it, refusing a newer version by name.

// BackupLocation is where the state backup of a warehouse lives: under
// _floe/, beside the namespace directories. (A namespace named _floe would
// share the prefix, but its tables only ever hold metadata/ and data/ below
// their own directory, never a file named latest.json.)
func BackupLocation(warehouse string) string {
	return strings.TrimSuffix(warehouse, "/") + "/_floe/state/latest.json"
}

// EncodeBackup serializes a state as a versioned snapshot envelope.
func EncodeBackup(s *fsm.State) ([]byte, error) {
	data, err := fsm.EncodeSnapshot(s)
	if err != nil {
		return nil, fmt.Errorf("encoding state backup: %w", err)
	}
	return data, nil
}

// DecodeBackup reads a state backup (the snapshot envelope). A backup in a
// newer format version is refused with a *fsm.VersionError that says it is
// the state backup and names both versions.
func DecodeBackup(r io.Reader) (*fsm.State, error) {
	st, err := fsm.DecodeSnapshot(r)
	if ve, ok := errors.AsType[*fsm.VersionError](err); ok {
		ve.Format = "state backup"
	}
	return st, err
}

// Backup writes the FSM's state to the object store. Only the leader
// writes (the node runs Run only while it leads): followers may lag, and a
// lagging writer would replace a newer backup with an older one.
type Backup struct {
	fsm       *fsm.FSM
	warehouse string
	props     iceberg.Properties
	log       *slog.Logger

	mu          sync.Mutex
	written     bool      // a write succeeded since start
	lastApplied uint64    // state.Applied of the last successful write
	lastAt      time.Time // time of the last successful write
	lastErr     error     // error of the last attempt, nil after a success
	// record replicates the fact of a write (BackupWritten); nil: not
	// recorded.
	record func(ctx context.Context, c fsm.BackupWritten) (uint64, error)
}

// RecordWith makes every successful write be reported through apply (the
// node's Apply of a BackupWritten command), so every node's status shows the
// backup's age. The report's own log entry does not count as a change that
// needs another backup.
func (b *Backup) RecordWith(apply func(ctx context.Context, c fsm.BackupWritten) (uint64, error)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.record = apply
}

// NewBackup returns a backup writer of fsm into warehouse, opening storage
// with props (the catalog's FileIO properties).
func NewBackup(fsm *fsm.FSM, warehouse string, props iceberg.Properties, log *slog.Logger) *Backup {
	if log == nil {
		log = slog.Default()
	}
	return &Backup{fsm: fsm, warehouse: warehouse, props: props, log: log.With("component", "backup")}
}

// Last reports the last successful write (zero time if none) with the
// applied index it captured, and the error of the last attempt if it failed.
func (b *Backup) Last() (at time.Time, applied uint64, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastAt, b.lastApplied, b.lastErr
}

// WriteOnce writes the current state unless it is the one written last
// (same applied index: nothing changed, the write would be a no-op).
func (b *Backup) WriteOnce(ctx context.Context) error {
	b.mu.Lock()
	written, last := b.written, b.lastApplied
	b.mu.Unlock()
	var unchanged bool
	b.fsm.Read(func(s *fsm.State) { unchanged = written && s.Applied == last })
	if unchanged {
		return nil // the write would be a no-op
	}
	// Encode a copy, outside the FSM's lock: encoding under it would hold
	// up every Apply for as long as the state takes to marshal.
	st, err := b.fsm.Snapshot()
	var applied uint64
	var data []byte
	if err == nil {
		applied = st.Applied
		data, err = EncodeBackup(st)
	}
	if err == nil {
		err = b.write(ctx, data)
	}
	now := time.Now()
	b.mu.Lock()
	b.lastErr = err
	if err == nil {
		b.written, b.lastApplied, b.lastAt = true, applied, now
	}
	record := b.record
	b.mu.Unlock()
	if err != nil || record == nil {
		return err
	}
	idx, rerr := record(ctx, fsm.BackupWritten{Location: BackupLocation(b.warehouse), Applied: applied, At: now.UnixMilli()})
	if rerr != nil {
		b.log.Debug("recording the state backup", "err", rerr)
		return nil // the backup itself is written; the report is best effort
	}
	// The report's own entry changes nothing worth another backup, so the
	// state at its index counts as written, but only when it came right
	// after the written state: an entry applied in between (a commit that
	// landed while this one was encoded) is not in the backup, and
	// skipping past it left an idle cluster's backup without its last
	// commit for good (TestBackupWritesWhatSlippedIn).
	b.mu.Lock()
	if b.lastApplied == applied && idx == applied+1 {
		b.lastApplied = idx
	}
	b.mu.Unlock()
	return nil
}

func (b *Backup) write(ctx context.Context, data []byte) error {
	loc := BackupLocation(b.warehouse)
	fsys, err := icebergio.LoadFS(ctx, b.props, loc)
	if err != nil {
		return fmt.Errorf("opening storage for state backup %s: %w", loc, err)
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return fmt.Errorf("writing state backup %s: storage is read-only", loc)
	}
	// An object store PUT replaces the object atomically; a local write
	// does not (a crash leaves a truncated file), so locally write aside
	// and rename, which is atomic there.
	if rfs, ok := fsys.(icebergio.RenameIO); ok && isLocal(fsys) {
		tmp := loc + ".tmp"
		if err := wfs.WriteFile(tmp, data); err != nil {
			return fmt.Errorf("writing state backup %s: %w", tmp, err)
		}
		if err := rfs.Rename(tmp, loc); err != nil {
			return fmt.Errorf("writing state backup %s: %w", loc, err)
		}
		return nil
	}
	if err := wfs.WriteFile(loc, data); err != nil {
		return fmt.Errorf("writing state backup %s: %w", loc, err)
	}
	return nil
}

func isLocal(fsys icebergio.IO) bool {
	switch fsys.(type) {
	case icebergio.LocalFS, *icebergio.LocalFS:
		return true
	}
	return false
}

// backupMinBackoff is the first retry delay after a failed write; it doubles
// with every further failure, capped at the interval.
const backupMinBackoff = time.Second

// Run writes the state every interval until ctx ends: leadership starts it
// for each term this node leads and ends ctx with the term
// (raftnode.Node.RunWhileLeader). A failed write is retried sooner than the interval, with capped
// exponential backoff, and logged; the first success after failures is
// logged too.
func (b *Backup) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = time.Minute
	}
	failures := 0
	delay := interval
	t := time.NewTimer(delay)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		delay = interval
		if err := b.WriteOnce(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			delay = min(interval, backupMinBackoff<<min(failures-1, 16))
			b.log.Warn("state backup failed", "location", BackupLocation(b.warehouse),
				"failures", failures, "retry_in", delay, "err", err)
		} else if failures > 0 {
			_, applied, _ := b.Last()
			b.log.Info("state backup written again", "location", BackupLocation(b.warehouse),
				"after_failures", failures, "applied", applied)
			failures = 0
		}
		t.Reset(delay)
	}
}
