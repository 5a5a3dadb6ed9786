package upsert

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// LiveDeleteFiles lists the delete files of snap.
func LiveDeleteFiles(fs icebergio.IO, snap *table.Snapshot) ([]iceberg.DataFile, error) {
	mans, err := snap.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("listing manifests: %w", err)
	}
	var out []iceberg.DataFile
	for _, m := range mans {
		if m.ManifestContent() != iceberg.ManifestContentDeletes {
			continue
		}
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return nil, fmt.Errorf("reading manifest %s: %w", m.FilePath(), err)
		}
		for _, e := range entries {
			out = append(out, e.DataFile())
		}
	}
	return out, nil
}

// DeleteTargets returns the data files a position-delete file deletes
// rows of.
func DeleteTargets(ctx context.Context, fs icebergio.IO, path string) (map[string]map[int64]bool, error) {
	targets := map[string]map[int64]bool{}
	if err := ReadDeletes(ctx, fs, path, targets); err != nil {
		return nil, err
	}
	return targets, nil
}
