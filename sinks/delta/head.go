package delta

import (
	"context"
	"encoding/json"
	"fmt"
)

// Head is the commitInfo of the log's latest version (nil for a log with
// no version yet, or a version written without one). It is read from the
// version's commit file when the tail came from a checkpoint. The caller
// (sinks/iceberg) matches its commit id against the Iceberg history to
// tell a sync that only rearranges rows from one that changes them.
func (l *Log) Head(ctx context.Context) (*CommitInfo, error) {
	if err := l.ensure(ctx); err != nil {
		return nil, err
	}
	v := l.snap.version
	if v < 0 {
		return nil, nil
	}
	if info, ok := l.snap.commits[v]; ok {
		return info, nil
	}
	actions, err := readCommit(ctx, l.st, v)
	if err != nil {
		return nil, fmt.Errorf("reading the head of the delta log: %w", err)
	}
	for _, a := range actions {
		if a.CommitInfo != nil {
			return a.CommitInfo, nil
		}
	}
	return nil, nil
}

// liveRows counts the rows a set of adds holds: each file's numRecords
// less its DV's cardinality. ok is false when a file has no numRecords in
// its stats, so the count cannot be trusted.
func liveRows(adds []*Add) (n int64, ok bool) {
	for _, a := range adds {
		var st struct {
			NumRecords *int64 `json:"numRecords"`
		}
		if a.Stats == "" || json.Unmarshal([]byte(a.Stats), &st) != nil || st.NumRecords == nil {
			return 0, false
		}
		n += *st.NumRecords
		if a.DeletionVector != nil {
			n -= a.DeletionVector.Cardinality
		}
	}
	return n, true
}
