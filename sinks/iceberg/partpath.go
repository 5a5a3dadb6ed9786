package iceberg

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ledger"
)

// Partition paths. iceberg-go names a data file of a partitioned table
// <location>/data/<field>=<value>/<file>, the value URL-encoded as Java's
// PartitionSpec.partitionToPath does (100% -> 100%25, a/b -> a%2Fb, a
// space -> +). That string is recorded in the manifest and is the object's
// key: literally on S3, and on file:// through internal/localfs, which
// takes file:// locations literally (iceberg-go's own LocalFS decoded
// them, so the file landed elsewhere). The Delta log records the path
// relative to the root escaped once more, as its protocol says.
//
// One thing is left: a long value makes a directory name no file system
// takes (NAME_MAX is 255 bytes) and a key S3 refuses (1,024 bytes). A
// partition directory name longer than maxDirName is shortened to its
// first keptDirBytes bytes, "~" and 16 hex digits of its SHA-256: the
// value itself is in the manifest and the Delta log's partitionValues, and
// distinct values keep distinct directories. Every other name is kept as
// iceberg-go makes it, so existing tables see no change.
const (
	maxDirName   = 200
	keptDirBytes = 100
)

// shortPath is the path a data file iceberg-go named p is written at: p
// with every partition directory name under loc/data/ longer than
// maxDirName shortened; p itself when there is none.
func shortPath(loc, p string) string {
	data := strings.TrimSuffix(loc, "/") + "/data/"
	rest, ok := strings.CutPrefix(p, data)
	if !ok {
		return p
	}
	segs := strings.Split(rest, "/")
	changed := false
	for i := range len(segs) - 1 { // the last is the file's own name
		if len(segs[i]) > maxDirName {
			segs[i] = shortDir(segs[i])
			changed = true
		}
	}
	if !changed {
		return p
	}
	return data + strings.Join(segs, "/")
}

// shortDir shortens one directory name, never cutting an escape (%XX) in
// two, so the name stays a valid URI path segment.
func shortDir(s string) string {
	sum := sha256.Sum256([]byte(s))
	cut := keptDirBytes
	if i := strings.LastIndexByte(s[:cut], '%'); i >= 0 && i > cut-3 {
		cut = i
	}
	return s[:cut] + "~" + hex.EncodeToString(sum[:8])
}

// shortNamed is tbl with an IO that writes each file iceberg-go creates
// at its shortPath: WriteRecords and compaction name files themselves.
// The caller records the same shortPath (shortDescriptor, shortFiles).
func shortNamed(tbl *table.Table) *table.Table {
	loc := tbl.Location()
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), func(ctx context.Context) (icebergio.IO, error) {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		return shortIO{IO: fsys, loc: loc}, nil
	}, nil)
}

// shortIO writes at shortPath; reads go to the path asked for (recorded
// paths are short already).
type shortIO struct {
	icebergio.IO
	loc string
}

func (s shortIO) writer() (icebergio.WriteFileIO, error) {
	w, ok := s.IO.(icebergio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("file IO %T cannot write", s.IO)
	}
	return w, nil
}

// Create implements icebergio.WriteFileIO.
func (s shortIO) Create(name string) (icebergio.FileWriter, error) {
	w, err := s.writer()
	if err != nil {
		return nil, err
	}
	return w.Create(shortPath(s.loc, name))
}

// WriteFile implements icebergio.WriteFileIO.
func (s shortIO) WriteFile(name string, p []byte) error {
	w, err := s.writer()
	if err != nil {
		return err
	}
	return w.WriteFile(shortPath(s.loc, name), p)
}

// ReadFile implements icebergio.ReadFileIO.
func (s shortIO) ReadFile(name string) ([]byte, error) {
	if r, ok := s.IO.(icebergio.ReadFileIO); ok {
		return r.ReadFile(name)
	}
	f, err := s.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// shortFiles records the files a compaction wrote (through shortNamed) at
// the paths they were written at.
func shortFiles(meta table.Metadata, loc string, files []iceberg.DataFile) ([]iceberg.DataFile, error) {
	out := make([]iceberg.DataFile, len(files))
	for i, df := range files {
		out[i] = df
		if p := shortPath(loc, df.FilePath()); p != df.FilePath() {
			d := describe(df)
			d.Path = p
			rebuilt, err := rebuild(meta, d)
			if err != nil {
				return nil, fmt.Errorf("renaming %s: %w", df.FilePath(), err)
			}
			out[i] = rebuilt
		}
	}
	return out, nil
}

// shortDescriptor is describe(df) with the path df was written at.
func shortDescriptor(loc string, df iceberg.DataFile) ledger.FileDescriptor {
	d := describe(df)
	d.Path = shortPath(loc, d.Path)
	return d
}
