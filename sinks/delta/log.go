package delta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
)

// Limits of what the reader accepts (every input has one): a commit file,
// _last_checkpoint and a checkpoint are read whole, so each is capped.
const (
	MaxCommitBytes         = 64 << 20
	MaxLastCheckpointBytes = 1 << 20
	MaxCheckpointBytes     = 1 << 30
	// maxTxnScanBack bounds how far back (in versions) the reader looks
	// for the commit that set the table's txn when the tail does not hold
	// it (the txn came from a checkpoint).
	maxTxnScanBack = 100
)

const logDir = "_delta_log"

func commitName(v int64) string     { return fmt.Sprintf("%s/%020d.json", logDir, v) }
func checkpointName(v int64) string { return fmt.Sprintf("%s/%020d.checkpoint.parquet", logDir, v) }

const lastCheckpointName = logDir + "/_last_checkpoint"

// parseLogName reads a base name of _delta_log: a commit (NNN.json) or a
// classic checkpoint (NNN.checkpoint.parquet). Other files (multi-part
// and UUID-named checkpoints, CRCs, compactions, temporaries) are ignored.
func parseLogName(name string) (v int64, checkpoint, ok bool) {
	if len(name) < 21 || name[20] != '.' {
		return 0, false, false
	}
	for _, c := range name[:20] {
		if c < '0' || c > '9' {
			return 0, false, false
		}
	}
	n, err := strconv.ParseInt(name[:20], 10, 64)
	if err != nil {
		return 0, false, false
	}
	switch name[20:] {
	case ".json":
		return n, false, true
	case ".checkpoint.parquet":
		return n, true, true
	}
	return 0, false, false
}

// snapshot is the table's state at a version: the reconciliation of every
// action up to it ("Action Reconciliation").
type snapshot struct {
	version  int64 // -1: no version yet
	protocol *Protocol
	metadata *Metadata
	txns     map[string]int64
	files    map[string]*Add    // live files by path
	removed  map[string]*Remove // tombstones by tombstoneKey
	// Known only for versions read from their commit files (not from a
	// checkpoint): the version that last set each app's txn, and the
	// commit id and offsets of every Floe commit.
	txnAt   map[string]int64
	commits map[int64]*CommitInfo
}

func newSnapshot() *snapshot {
	return &snapshot{version: -1, txns: map[string]int64{}, files: map[string]*Add{},
		removed: map[string]*Remove{}, txnAt: map[string]int64{}, commits: map[int64]*CommitInfo{}}
}

// apply replays one version's actions.
func (s *snapshot) apply(v int64, actions []Action) {
	for _, a := range actions {
		switch {
		case a.Protocol != nil:
			s.protocol = a.Protocol
		case a.MetaData != nil:
			s.metadata = a.MetaData
		case a.Txn != nil:
			s.txns[a.Txn.AppID] = a.Txn.Version
			s.txnAt[a.Txn.AppID] = v
		case a.Add != nil:
			s.files[a.Add.Path] = a.Add
			delete(s.removed, tombstoneKey(a.Add.Path, a.Add.DeletionVector))
		case a.Remove != nil:
			// A remove ends the logical file of its path and DV only
			// ("Add File and Remove File"): a file whose DV grows is
			// removed with its old DV and added with the new one in one
			// version, in either order.
			if cur, ok := s.files[a.Remove.Path]; ok && cur.DeletionVector.UniqueID() == a.Remove.DeletionVector.UniqueID() {
				delete(s.files, a.Remove.Path)
			}
			s.removed[tombstoneKey(a.Remove.Path, a.Remove.DeletionVector)] = a.Remove
		case a.CommitInfo != nil:
			s.commits[v] = a.CommitInfo
		}
	}
	s.version = v
}

// tombstoneKey is the logical file of a path and DV: tombstones are kept
// per logical file ("Action Reconciliation"), so the remove of a file's
// old DV stays (and keeps its DV file referenced) when the same path is
// added again with a new DV.
func tombstoneKey(path string, dv *DeletionVector) string {
	return path + "\x00" + dv.UniqueID()
}

// lastCheckpoint is the _last_checkpoint file (the fields Floe uses).
type lastCheckpoint struct {
	Version       int64  `json:"version"`
	Size          int64  `json:"size"`
	Parts         *int64 `json:"parts,omitempty"`
	SizeInBytes   int64  `json:"sizeInBytes,omitempty"`
	NumOfAddFiles int64  `json:"numOfAddFiles,omitempty"`
}

func parseLastCheckpoint(b []byte) (lastCheckpoint, error) {
	var lc lastCheckpoint
	if err := json.Unmarshal(b, &lc); err != nil {
		return lastCheckpoint{}, fmt.Errorf("%w: _last_checkpoint: %v", ErrCorruptLog, err)
	}
	if lc.Version < 0 {
		return lastCheckpoint{}, fmt.Errorf("%w: _last_checkpoint version %d", ErrCorruptLog, lc.Version)
	}
	return lc, nil
}

// readTail reconstructs the latest snapshot: the newest classic checkpoint
// (_last_checkpoint says where to start listing; a newer checkpoint the
// listing finds wins, as after a crash between the checkpoint and
// _last_checkpoint), then every commit after it, which must follow
// without a gap.
func readTail(ctx context.Context, st Store) (*snapshot, error) {
	start := ""
	b, err := st.Get(ctx, lastCheckpointName, MaxLastCheckpointBytes)
	switch {
	case err == nil:
		lc, err := parseLastCheckpoint(b)
		if err != nil {
			return nil, err
		}
		if lc.Parts == nil && lc.Version > 0 {
			start = fmt.Sprintf("%020d", lc.Version-1)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("reading _last_checkpoint: %w", err)
	}
	names, err := st.List(ctx, logDir, start)
	if err != nil {
		return nil, fmt.Errorf("listing the delta log: %w", err)
	}
	cp, commits := scanNames(names)
	if cp < 0 && start != "" {
		// _last_checkpoint names a checkpoint that is gone: replay the
		// whole log, as Delta's readers do.
		if names, err = st.List(ctx, logDir, ""); err != nil {
			return nil, fmt.Errorf("listing the delta log: %w", err)
		}
		cp, commits = scanNames(names)
	}
	snap := newSnapshot()
	if cp >= 0 {
		if snap, err = readCheckpoint(ctx, st, cp); err != nil {
			return nil, err
		}
	}
	for _, v := range commits {
		if v <= snap.version {
			continue
		}
		if v != snap.version+1 {
			return nil, fmt.Errorf("%w: version %d follows version %d", ErrCorruptLog, v, snap.version)
		}
		actions, err := readCommit(ctx, st, v)
		if err != nil {
			return nil, err
		}
		snap.apply(v, actions)
	}
	if snap.version >= 0 && (snap.protocol == nil || snap.metadata == nil) {
		return nil, fmt.Errorf("%w: version %d has no protocol or metaData", ErrCorruptLog, snap.version)
	}
	return snap, nil
}

// scanNames finds the newest classic checkpoint and the commit versions
// among the log's file names (sorted).
func scanNames(names []string) (cp int64, commits []int64) {
	cp = -1
	for _, n := range names {
		v, isCP, ok := parseLogName(n)
		switch {
		case !ok:
		case isCP:
			cp = max(cp, v)
		default:
			commits = append(commits, v)
		}
	}
	return cp, commits
}

func readCommit(ctx context.Context, st Store, v int64) ([]Action, error) {
	b, err := st.Get(ctx, commitName(v), MaxCommitBytes)
	if err != nil {
		return nil, fmt.Errorf("reading delta version %d: %w", v, err)
	}
	actions, err := parseActions(b)
	if err != nil {
		return nil, fmt.Errorf("delta version %d: %w", v, err)
	}
	return actions, nil
}

// txnCommit finds the commit that set app's txn when the snapshot does not
// know it (it came from a checkpoint): it reads the commit files back from
// the snapshot's version, at most maxTxnScanBack of them, and stops at the
// first missing one (cleaned up).
func txnCommit(ctx context.Context, st Store, snap *snapshot, app string) (int64, *CommitInfo) {
	if v, ok := snap.txnAt[app]; ok {
		return v, snap.commits[v]
	}
	for v := snap.version; v >= 0 && v > snap.version-maxTxnScanBack; v-- {
		actions, err := readCommit(ctx, st, v)
		if err != nil {
			return -1, nil
		}
		var info *CommitInfo
		found := false
		for _, a := range actions {
			if a.CommitInfo != nil {
				info = a.CommitInfo
			}
			if a.Txn != nil && a.Txn.AppID == app {
				found = true
			}
		}
		if found {
			return v, info
		}
	}
	return -1, nil
}
