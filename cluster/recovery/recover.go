package recovery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// Recovery from total loss (floe serve --recover): every Raft disk is gone,
// the state backup (backup.go) and the tables are what is left. The backup
// may be up to one interval old; the tables are not, and every Floe snapshot
// says which offsets it holds (floe.offsets, invariant 2). Recover takes the
// backup's catalog and moves each table forward to its newest committed
// metadata file, and each partition's committed offset to what that file's
// current snapshot says, whichever is newer. The new cluster then fetches
// every partition from there: nothing committed is lost or written twice.

// ErrNoBackup: the warehouse holds no state backup to recover from. (Its
// sibling ErrNotEmpty, refusing a restore into a live cluster, is
// fsm.ErrNotEmpty, with the other sentinels the RPC layer maps.)
var ErrNoBackup = errors.New("no state backup")

// Snapshot summary properties that Floe commits write (sinks/iceberg defines
// them; cluster/ must not import sinks/, so they are repeated here).
const (
	summaryOffsets   = "floe.offsets"
	summaryCommitID  = "floe.commit-id"
	summaryOperation = "floe.operation"
)

// Recover reads the state backup of warehouse and returns the state a new
// cluster starts from, to be proposed as one RestoreState command:
//
//   - Namespaces, Tables and Sources as backed up; members and committer
//     roles cleared (the new cluster's nodes register and are assigned anew;
//     committer epochs restart at 1, which is safe because the fence only
//     matters within one Raft log and nothing of the old log reaches the new
//     one). Partition assignments keep their epochs with no holder, so the
//     next assignment takes epoch+1 and epochs keep growing even across
//     recoveries.
//   - Pending ledger entries dropped: their files were never committed and
//     become orphans for orphan cleanup; their offsets are fetched again.
//   - Every table's pointer advanced along its committed metadata files
//     (walk), and each partition's Committed = End = max(backup, summary).
//
// Rows, Files and the other counters stay as backed up and may be behind by
// the commits made after the backup. Tables created after the backup are
// not found (their files stay, unreferenced) and tables dropped after it
// come back; both are bounded by the backup interval.
func Recover(ctx context.Context, warehouse string, props iceberg.Properties, log *slog.Logger) (*fsm.State, error) {
	if log == nil {
		log = slog.Default()
	}
	loc := BackupLocation(warehouse)
	r := &recoverer{ctx: ctx, props: props, log: log.With("component", "recover"), ios: map[string]icebergio.IO{}, parsed: map[string]table.Metadata{}}
	data, err := r.readFile(loc)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("recovering from %s: %w", loc, ErrNoBackup)
	}
	if err != nil {
		return nil, fmt.Errorf("recovering from %s: %w", loc, err)
	}
	backup, err := DecodeBackup(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("recovering from %s: %w", loc, err)
	}
	st := restartState(backup)

	// Main tables first: a dead-letter table may only move as far as its
	// table did (walkDLQ).
	var mains, dlqs []string
	for _, key := range st.TableKeys() {
		if isDLQTable(st, key) {
			dlqs = append(dlqs, key)
		} else {
			mains = append(mains, key)
		}
	}
	commitIDs := map[string]map[string]bool{}
	for _, key := range mains {
		chain, err := r.walk(key, st.Tables[key].MetadataLocation, nil)
		if err != nil {
			return nil, fmt.Errorf("recovering table %s: %w", ledger.DisplayName(key), err)
		}
		adopt(st.Tables[key], chain)
		if err := mergeOffsets(st.Ledger, key, chain[len(chain)-1].meta); err != nil {
			return nil, fmt.Errorf("recovering table %s: %w", ledger.DisplayName(key), err)
		}
		commitIDs[key] = chainCommitIDs(chain)
		r.logTable(key, chain)
	}
	for _, key := range dlqs {
		main := strings.TrimSuffix(key, "_dlq")
		chain, err := r.walk(key, st.Tables[key].MetadataLocation, pairedWith(commitIDs[main]))
		if err != nil {
			return nil, fmt.Errorf("recovering table %s: %w", ledger.DisplayName(key), err)
		}
		adopt(st.Tables[key], chain)
		r.logTable(key, chain)
	}
	if err := st.Ledger.Validate(); err != nil {
		return nil, fmt.Errorf("recovered ledger is inconsistent: %w", err)
	}
	return st, nil
}

// restartState keeps what outlives the old members and resets the rest.
func restartState(b *fsm.State) *fsm.State {
	st := fsm.NewState()
	st.Namespaces, st.Tables, st.Sources = b.Namespaces, b.Tables, b.Sources
	st.Ledger.Offsets = b.Ledger.Offsets
	for _, offs := range st.Ledger.Offsets {
		for _, o := range offs {
			o.End = o.Committed // pending entries are dropped
		}
	}
	for tp, a := range b.Ledger.Assignments {
		st.Ledger.Assignments[tp] = ledger.Assignment{Epoch: a.Epoch}
	}
	return st
}

// isDLQTable reports whether key is the dead-letter table of another table:
// its main table exists and no source routes into it (a mapping could name a
// table ..._dlq on purpose; then it is a table of its own).
func isDLQTable(st *fsm.State, key string) bool {
	main, ok := strings.CutSuffix(key, "_dlq")
	if !ok || st.Tables[main] == nil {
		return false
	}
	for _, src := range st.Sources {
		if src.Table == key {
			return false
		}
	}
	return true
}

// ReadBackup reads and validates the state backup of a warehouse as it was
// written, without recovering anything. It wraps ErrNoBackup when there is
// none.
func ReadBackup(ctx context.Context, warehouse string, props iceberg.Properties) (*fsm.State, error) {
	r := &recoverer{ctx: ctx, props: props, log: slog.Default(), ios: map[string]icebergio.IO{}, parsed: map[string]table.Metadata{}}
	loc := BackupLocation(warehouse)
	data, err := r.readFile(loc)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", loc, ErrNoBackup)
	}
	if err != nil {
		return nil, err
	}
	st, err := DecodeBackup(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", loc, err)
	}
	return st, nil
}
