package recovery

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/internal/ledger"
)

// recoverer reads the warehouse for Recover: it keeps one FileIO per
// bucket and every metadata file it parsed.
type recoverer struct {
	ctx    context.Context
	props  iceberg.Properties
	log    *slog.Logger
	ios    map[string]icebergio.IO   // scheme://authority -> IO
	parsed map[string]table.Metadata // location -> metadata, nil if unparsable
}

func (r *recoverer) logTable(key string, chain []metaStep) {
	tip := chain[len(chain)-1]
	r.log.Info("table recovered", "table", ledger.DisplayName(key),
		"backed_up", chain[0].loc, "metadata", tip.loc, "commits_after_backup", len(chain)-1)
}

// io returns the FileIO for loc, one per bucket (s3 clients are not free).
func (r *recoverer) io(loc string) (icebergio.IO, error) {
	root := loc
	if i := strings.Index(loc, "://"); i >= 0 {
		if j := strings.Index(loc[i+3:], "/"); j >= 0 {
			root = loc[:i+3+j]
		}
	}
	if fsys, ok := r.ios[root]; ok {
		return fsys, nil
	}
	fsys, err := icebergio.LoadFS(r.ctx, r.props, loc)
	if err != nil {
		return nil, fmt.Errorf("opening storage for %s: %w", loc, err)
	}
	r.ios[root] = fsys
	return fsys, nil
}

func (r *recoverer) readFile(loc string) ([]byte, error) {
	fsys, err := r.io(loc)
	if err != nil {
		return nil, err
	}
	return catalog.ReadFile(fsys, loc)
}

// metadata reads and parses a metadata file. An unparsable file (a write
// cut short) is no candidate: it returns nil metadata and no error. Failing
// to read is an error: guessing past an unreadable file could skip a commit.
func (r *recoverer) metadata(loc string) (table.Metadata, error) {
	if m, ok := r.parsed[loc]; ok {
		return m, nil
	}
	data, err := r.readFile(loc)
	if err != nil {
		return nil, err
	}
	m, err := catalog.ParseMetadata(data)
	if err != nil {
		r.log.Warn("skipping unparsable metadata file", "metadata", loc, "err", err)
		m = nil
	}
	r.parsed[loc] = m
	return m, nil
}

// list returns the metadata files directly in dir by version.
func (r *recoverer) list(dir string) (map[int][]string, error) {
	fsys, err := r.io(dir)
	if err != nil {
		return nil, err
	}
	lfs, ok := fsys.(icebergio.ListableIO)
	if !ok {
		return nil, fmt.Errorf("storage for %s cannot list files", dir)
	}
	out := map[int][]string{}
	root := true
	err = lfs.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			if root {
				root = false
				return nil
			}
			return fs.SkipDir
		}
		root = false
		// Local walks yield OS paths, blob walks URIs: only the name is
		// used, joined to dir so candidates are spelled like the pointer.
		name := path.Base(filepath.ToSlash(p))
		if v := catalog.MetadataVersion("/" + name); v >= 0 {
			out[v] = append(out[v], dir+"/"+name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	for _, locs := range out {
		slices.Sort(locs)
	}
	return out, nil
}
